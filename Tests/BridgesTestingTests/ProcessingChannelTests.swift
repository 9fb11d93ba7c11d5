import BridgesTesting
import Testing

@Suite struct ProcessingChannelTests {
    @Test func send_returnsOnceTheConsumerHasProcessedTheElement() async throws {
        let channel = ProcessingChannel<Int>()
        let processed = Log<Int>()
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
        let processed = Log<Int>()
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
        let processed = Log<Int>()
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
        let diagnostics = Log<BridgeDiagnostic>()
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
        let processed = Log<Int>()
        let consumers = (0..<2).map { _ in Task { for await value in channel { processed.append(value) } } }
        for value in 0..<50 { try await channel.send(value) }
        #expect(processed.values.sorted() == Array(0..<50))
        channel.finish()
        for consumer in consumers { await consumer.value }
    }
}
