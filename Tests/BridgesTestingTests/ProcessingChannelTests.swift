import BridgesTesting
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct ProcessingChannelTests {
    @Test func send_returnsOnceTheConsumerHasProcessedTheElement() async throws {
        let channel = ProcessingChannel<Int>()
        let processed = Collected<Int>()
        let consumer = Task {
            for await value in channel { processed.append(value) }
        }
        for value in 0..<200 {
            try await channel.send(value)
            #expect(processed.values.count == value + 1)  // no yields, no sleeps: send waited
        }
        #expect(processed.values == Array(0..<200))
        channel.finish()
        await consumer.value
    }

    @Test func send_whenTheConsumerBreaksOut_returns() async throws {
        let channel = ProcessingChannel<Int>()
        let processed = Collected<Int>()
        let consumer = Task {
            for await value in channel {
                processed.append(value)
                break  // the iterator is released: the element counts as processed
            }
        }
        try await channel.send(1)
        #expect(processed.values == [1])
        await consumer.value
    }

    @Test func send_whenCancelledBeforeAConsumerTakesIt_throws() async {
        let channel = ProcessingChannel<Int>()
        let sender = Task { try await channel.send(1) }
        sender.cancel()
        await #expect(throws: CancellationError.self) { try await sender.value }
    }

    @Test func finish_letsTheConsumerDrainThenEnds() async throws {
        let channel = ProcessingChannel<Int>()
        let processed = Collected<Int>()
        await withSerialTasks {
            let senders = (1...3).map { value in Task { try await channel.send(value) } }
            await runUntilIdle()  // all three are waiting, in order
            channel.finish()
            for await value in channel { processed.append(value) }
            for sender in senders { #expect(await sender.result.isSuccess) }
        }
        #expect(processed.values == [1, 2, 3])
    }

    @Test func send_afterFinish_dropsTheElementAndReportsIt() async throws {
        let channel = ProcessingChannel<Int>()
        let diagnostics = Collected<BridgeDiagnostic>()
        channel.finish()
        try await Diagnostics.withHandler({ diagnostics.append($0) }) {
            try await channel.send(1)
        }
        #expect(diagnostics.values.map(\.kind) == [.yieldAfterFinish])
        var iterator = channel.makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }

    @Test func consumer_whenCancelledWhileWaiting_ends() async {
        let channel = ProcessingChannel<Int>()
        await withSerialTasks {
            let consumer = Task { for await _ in channel {} }
            await runUntilIdle()  // the consumer waits in next()
            consumer.cancel()
            await consumer.value
        }
    }

    @Test func twoConsumers_shareTheElementsInOrder() async throws {
        let channel = ProcessingChannel<Int>()
        let processed = Collected<Int>()
        let consumers = (0..<2).map { _ in Task { for await value in channel { processed.append(value) } } }
        for value in 0..<50 { try await channel.send(value) }
        #expect(processed.values.sorted() == Array(0..<50))
        channel.finish()
        for consumer in consumers { await consumer.value }
    }

    // MARK: - Cancellation order, lost elements, releases (the channel on the engine)

    /// A send cancelled while its element waits in line withdraws it: the consumer never sees
    /// it, and takes the next sender's element first.
    @Test func send_cancelledWhilePending_withdrawsItsElement_theNextSendIsDeliveredFirst() async throws {
        await withLeakTracking { tracker in
            let channel = ProcessingChannel<Int>()
            tracker.track(channel, as: "the channel")
            await withSerialTasks {
                let first = Task { try await channel.send(1) }
                await runUntilIdle()  // 1 waits in line
                let second = Task { try await channel.send(2) }
                await runUntilIdle()  // 2 waits behind it
                first.cancel()
                await #expect(throws: CancellationError.self) { try await first.value }
                var iterator = channel.makeAsyncIterator()
                #expect(await iterator.next() == 2)
                channel.finish()
                #expect(await iterator.next() == nil)  // 1 is gone for good
                #expect(await second.result.isSuccess)
            }
        }
    }

    /// A consumer cancelled while waiting ends with nil; another consumer still gets every element.
    @Test func consumerCancelledWhileWaiting_theOtherConsumerGetsEverything() async throws {
        await withLeakTracking { tracker in
            let channel = ProcessingChannel<Int>()
            tracker.track(channel, as: "the channel")
            let processed = Collected<Int>()
            await withSerialTasks {
                let cancelled = Task { () -> Int? in
                    var iterator = channel.makeAsyncIterator()
                    return await iterator.next()
                }
                let other = Task { for await value in channel { processed.append(value) } }
                await runUntilIdle()  // both wait
                cancelled.cancel()
                #expect(await cancelled.value == nil)
                for value in 0..<5 { try? await channel.send(value) }
                channel.finish()
                await other.value
            }
            #expect(processed.values == Array(0..<5))
        }
    }

    /// A consumer cancelled while waiting, racing a send on real threads: the element reaches
    /// exactly one consumer (the cancelled one, if it got there first, or the next one: an
    /// element handed to a consumer that just ended goes back in line), and `send` returns.
    /// (If the element were lost, the second consumer would wait forever: the time limit fails it.)
    @Test
    func consumerCancelRacingSend_theElementIsDeliveredExactlyOnce_stress() async throws {
        var tookIt = [0, 0]
        for i in 0..<5000 {
            let channel = ProcessingChannel<Int>()
            let first = Task.detached { () -> Int? in
                var iterator = channel.makeAsyncIterator()
                _ = await iterator.next()  // the warm-up element
                return await iterator.next()  // its iterator is released when it returns: processed
            }
            try await channel.send(-1)  // returns as `first` asks for the next element: it is (about to be) waiting
            let sender = Task.detached { try await channel.send(i) }
            first.cancel()
            if let value = await first.value {
                #expect(value == i)
                tookIt[0] += 1
            } else {
                // In the test's own task, so that the time limit's cancellation ends it (nil).
                var iterator: ProcessingChannel<Int>.Iterator? = channel.makeAsyncIterator()
                let second = await iterator?.next()
                iterator = nil  // released: the element counts as processed
                #expect(second == i, "iteration \(i)")
                if second == nil {
                    sender.cancel()
                    break
                }  // lost: fail once, do not hang
                tookIt[1] += 1
            }
            #expect(await sender.result.isSuccess, "iteration \(i)")
        }
        print(
            "cancel racing send: the cancelled consumer took the element \(tookIt[0]) times, the next one \(tookIt[1]) times"
        )
    }

    /// Nothing keeps a channel alive once its consumers ended and its senders returned, including
    /// a consumer cancelled while waiting (its stream held the channel until its teardown ran).
    @Test func channel_isReleased_afterAWaitingConsumerIsCancelled() async {
        await withLeakTracking { tracker in
            let channel = ProcessingChannel<Int>()
            tracker.track(channel, as: "the channel")
            await withSerialTasks {
                let consumer = Task { for await _ in channel {} }
                await runUntilIdle()  // waits in next(): the channel holds its sink
                consumer.cancel()
                await consumer.value
            }
        }
    }

    /// A main-actor loop takes elements on the main actor (`next(isolation:)`), and `send` still
    /// waits for it to have processed each one.
    @MainActor
    @Test func mainActorConsumer_processesOnTheMainActor() async throws {
        let channel = ProcessingChannel<Int>()
        var processed: [Int] = []
        let consumer = Task { @MainActor in
            for await value in channel {
                MainActor.assertIsolated()
                processed.append(value)
            }
        }
        for value in 0..<20 {
            try await channel.send(value)
            #expect(processed.count == value + 1)
        }
        channel.finish()
        await consumer.value
        #expect(processed == Array(0..<20))
    }
}
