import BridgesTesting
import Dispatch
import TestSupport
import Testing

@testable import Bridges

/// The contract every multi-value source keeps, held at the engine: order under
/// cancellation, teardown before the loop ends, accounting that adds up, demand from depth, and
/// pausing that cannot lose its wake-up.
@Suite("CallbackStream: contract", .timeLimit(.minutes(3)))
struct CallbackStreamContractTests {
    static let allPolicies: [BufferingPolicy] = [
        .unbounded, .latest, .drop, .rendezvous, .dropNewest(3), .dropOldest(3), .suspending(2),
    ]

    // MARK: - Rendezvous order under cancellation

    @Test func rendezvous_cancellingTheLaterSenderFirst_keepsSendOrder() async {
        await withSerialTasks {
            let box = SinkBox<Int, Never>()
            let stream = CallbackStream<Int, Never>(buffering: .rendezvous) { sink in
                box.set(sink)
                sink.yield(0)  // taken by the first next(), so nobody is waiting when 1 and 2 are sent
                return Cancellation()
            }
            var iterator = stream.makeAsyncIterator()
            #expect(await iterator.next() == 0)
            let sink = box.sink
            let first = Task { await sink.send(1) }
            await runUntilIdle()  // first is suspended in send(1)
            let second = Task { await sink.send(2) }
            await runUntilIdle()  // second is suspended in send(2), behind it
            second.cancel()
            #expect(await second.value == .stopProducing, "a cancelled send returns at once; its element is kept")
            #expect(await iterator.next() == 1, "the earlier send is delivered first, whatever the cancellation order")
            #expect(await first.value == .enqueued)
            #expect(await iterator.next() == 2)
            box.sink.finish()  // a producer that is done says so
            box.clear()
        }
    }

    // MARK: - Teardown before the loop ends

    @Test func producerFinishesFromAnotherThread_codeAfterTheLoopSeesTheTeardownDone() async {
        for round in 0..<200 {
            let torn = Counter()
            let box = SinkBox<Int, any Error>()
            let stream = CallbackStream<Int, any Error> { sink in
                box.set(sink)
                return Cancellation {
                    // Real teardowns take a while (GRDB's, a socket's close): long enough for a
                    // consumer resumed first to run the code after its loop.
                    var work = 0
                    for i in 0..<200_000 { work &+= i &* i }
                    if work == 42 { print(work) }
                    torn.increment()
                }
            }
            let consumer = Task { () -> Int in
                var count = 0
                do { for try await _ in stream { count += 1 } } catch {}
                return torn.value  // code after the loop (a retry, an assertion)
            }
            await box.ready.wait()
            let sink = box.sink
            box.clear()
            DispatchQueue.global().async {
                if round % 2 == 0 { sink.yield(round) }  // half with an element buffered, half suspended
                sink.finish(throwing: TestError(code: round))
            }
            #expect(await consumer.value == 1, "round \(round): the loop ended before its teardown ran")
        }
    }

    @Test func teardownLearnsWhyTheStreamEnded() async throws {
        let reasons = Collected<String>()
        func stream(
            _ end: @escaping @Sendable (CallbackStream<Int, TestError>.Sink) -> Void
        ) -> CallbackStream<Int, TestError> {
            CallbackStream<Int, TestError> { sink in
                end(sink)
                return .onTermination { termination in
                    switch termination {
                    case .finished: reasons.append("finished")
                    case .failed(let error): reasons.append("failed(\(error.code))")
                    case .cancelled: reasons.append("cancelled")
                    }
                }
            }
        }
        for try await _ in stream({ $0.finish() }) {}
        do { for try await _ in stream({ $0.finish(throwing: TestError(code: 7)) }) {} } catch {}
        let box = SinkBox<Int, TestError>()  // keeps the sink: released, it would finish the stream
        for try await _ in stream({
            box.set($0)
            $0.yield(1)
        }) { break }
        #expect(reasons.values == ["finished", "failed(7)", "cancelled"])
    }

    // MARK: - finish(throwing:) after the end

    @Test func finishThrowingAfterTheConsumerLeft_isReported() async throws {
        let (_, diagnostics) = try await capturingDiagnostics {
            let stream = CallbackStream<Int, TestError> { sink in
                sink.yield(1)
                // The teardown learns the consumer left and reports an error nobody will see.
                return Cancellation { sink.finish(throwing: TestError(code: 9)) }
            }
            for try await _ in stream { break }
        }
        #expect(diagnostics.count == 1)
        #expect(diagnostics.first?.message.contains("TestError(code: 9)") == true)
    }

    /// The same error passed later, from outside the teardown (the producer kept its sink and
    /// fails after the consumer broke out): reported too.
    @Test func finishThrowingAfterTheConsumerLeft_fromOutsideTheTeardown_isReported() async throws {
        let box = SinkBox<Int, TestError>()
        let probe = StreamProbe()
        let (_, diagnostics) = try await capturingDiagnostics {
            let stream = CallbackStream<Int, TestError>.probed(probe, box: box) { sink in sink.yield(1) }
            for try await _ in stream { break }
            #expect(probe.teardowns.value == 1)
            box.sink.finish(throwing: TestError(code: 10))
        }
        #expect(diagnostics.map(\.kind) == [.yieldAfterFinish])
        #expect(diagnostics.first?.message.contains("TestError(code: 10)") == true)
        box.clear()
        await probe.proxyReleased.wait()
    }

    /// A cancelled consumer (not one that broke out) leaves the same way: the error is reported.
    @Test func finishThrowingAfterTheConsumerWasCancelled_fromOutside_isReported() async throws {
        let box = SinkBox<Int, any Error>()
        let probe = StreamProbe()
        let (_, diagnostics) = await capturingDiagnostics {
            let stream = CallbackStream<Int, any Error>.probed(probe, box: box)
            let consumer = Task { do { for try await _ in stream {} } catch {} }
            await box.ready.wait()
            consumer.cancel()
            await consumer.value
            box.sink.finish(throwing: TestError(code: 11))
        }
        #expect(diagnostics.map(\.kind) == [.yieldAfterFinish])
        #expect(diagnostics.first?.message.contains("TestError(code: 11)") == true)
        box.clear()
        await probe.proxyReleased.wait()
    }

    @Test func plainFinishFromTheTeardownAfterTheConsumerLeft_isNotMisuse() async {
        let (_, diagnostics) = await capturingDiagnostics {
            let stream = CallbackStream<Int, Never> { sink in
                sink.yield(1)
                return Cancellation { sink.finish() }
            }
            for await _ in stream { break }
        }
        #expect(diagnostics.isEmpty)
    }

    // MARK: - Accounting

    /// Producer on another thread, consumer cancelled at a random moment: every element produced
    /// is either delivered or reported undelivered, exactly once.
    @Test(.timeLimit(.minutes(3)), arguments: allPolicies)
    func deliveredPlusUndelivered_equalsProduced_underCancellation(_ policy: BufferingPolicy) async {
        let rounds = stressRounds(10_000)
        let perRound = 8
        for round in 0..<rounds {
            let undelivered = Collected<String>()
            let produced = Counter()
            let producerDone = Signal()
            let started = Counter()
            let stream = CallbackStream<Int, Never>(
                buffering: policy,
                onUndelivered: { element, reason in undelivered.append("\(element)\(reason)") }
            ) { sink in
                started.increment()
                DispatchQueue.global().async {
                    for i in 0..<perRound {
                        produced.increment()
                        if case .terminated = sink.yield(i) { break }
                    }
                    // A well-behaved producer: without it, every round whose consumer reads to
                    // the end is a sinkDropped misuse, and the suite printed ~23 000 warnings.
                    sink.finish()
                    producerDone.open()
                }
                return Cancellation()
            }
            let consumer = Task { () -> [Int] in
                var delivered: [Int] = []
                for await value in stream {
                    delivered.append(value)
                    if delivered.count == round % (perRound + 1) { break }  // sometimes it breaks out
                }
                return delivered
            }
            if round % 3 != 0 { consumer.cancel() }  // runs the cancellation handler here, synchronously
            let delivered = await consumer.value
            if started.value > 0 { await producerDone.wait() }
            #expect(
                delivered.count + undelivered.count == produced.value,
                "\(policy) round \(round): \(delivered) delivered + \(undelivered.values) undelivered != \(produced.value) produced"
            )
            if delivered.count + undelivered.count != produced.value { return }
        }
    }

    @Test func undeliveredReasons_dropped_cancelled_terminated() async {
        let reasons = Collected<String>()
        let box = SinkBox<Int, Never>()
        let stream = CallbackStream<Int, Never>(
            buffering: .latest,
            onDrop: { reasons.append("onDrop(\($0))") },
            onUndelivered: { element, reason in reasons.append("\(element)\(reason)") }
        ) { sink in
            box.set(sink)
            sink.yield(1)
            sink.yield(2)  // drops 1
            return Cancellation()
        }
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == 2)
        box.sink.yield(3)
        iterator = stream.makeAsyncIterator()  // the first iterator is released: 3 was buffered
        #expect(box.sink.yield(4) == .terminated)
        #expect(reasons.values == ["onDrop(1)", "1.dropped", "3.cancelled", "4.terminated"])
        box.clear()
        _ = iterator
    }

    // MARK: - Demand from depth

    @Test func suspending_excessYields_demandOnlyWhenThereIsRoom() async throws {
        let demand = Collected<Int>()
        let box = SinkBox<Int, Never>()
        let stream = CallbackStream<Int, Never>(buffering: .suspending(2)) { sink in
            box.set(sink)
            sink.onDemand { demand.append($0) }
            for i in 1...4 { sink.yield(i) }  // two beyond capacity: the buffer holds 4
            return Cancellation()
        }
        var iterator = stream.makeAsyncIterator()
        var taken: [Int] = []
        var demandAfterEachTake: [[Int]] = []
        for _ in 1...4 {
            taken.append(try #require(await iterator.next()))  // nil only if a time limit cancelled the test
            demandAfterEachTake.append(demand.values)
        }
        #expect(taken == [1, 2, 3, 4])
        // Registration: room 2. Takes 1 and 2 leave 3 and 2 buffered: no room, no demand.
        // Takes 3 and 4 make room for one each.
        #expect(demandAfterEachTake == [[2], [2], [2, 1], [2, 1, 1]])
        #expect(demand.values.reduce(0, +) - 4 <= 2, "outstanding demand never above capacity")
        box.sink.finish()  // a producer that is done says so
        box.clear()
    }

    @Test func watermark_demandOnlyOnceDrainedToLow_thenForTheWholeRoom() async {
        let demand = Collected<Int>()
        let results = Collected<String>()
        let box = SinkBox<Int, Never>()
        let stream = CallbackStream<Int, Never>(buffering: .watermark(low: 1, high: 4)) { sink in
            box.set(sink)
            sink.onDemand { demand.append($0) }
            for i in 1...4 { results.append("\(sink.yield(i))") }
            return Cancellation()
        }
        var iterator = stream.makeAsyncIterator()
        var demandAfterEachTake: [[Int]] = []
        for _ in 1...4 {
            _ = await iterator.next()
            demandAfterEachTake.append(demand.values)
        }
        #expect(results.values == [".enqueued", ".enqueued", ".enqueued", ".stopProducing"])
        #expect(
            demandAfterEachTake == [[4], [4], [4, 3], [4, 3, 1]],
            "nothing until the depth is down to low (1), then the room")
        #expect(BufferingPolicy.watermark(low: 1, high: 4).description == ".watermark(low: 1, high: 4)")
        #expect(BufferingPolicy.watermark(low: 1, high: 4).isWaiting)
        box.sink.finish()  // a producer that is done says so
        box.clear()
    }

    // MARK: - Pausing that cannot lose its wake-up

    /// The documented pattern: a source that pauses when its credit runs out and resumes when the
    /// consumer makes room, through `DemandGate`. `.suspending(1)` and a consumer faster than the
    /// producer put `onDemand` in the gap between `yield` and the pause as often as possible. A
    /// lost wake-up hangs a round (and the time limit fails the test).
    @Test(.timeLimit(.minutes(3)))
    func pauseResumeThroughDemandGate_suspending1_fastConsumer_neverLosesAWakeUp() async {
        for round in 0..<stressRounds(10_000) {
            let perRound = 16
            let stream = CallbackStream<Int, Never>(buffering: .suspending(1)) { sink in
                let source = QueuePausableSource(count: perRound, sink: sink)
                let gate = DemandGate(pause: { source.pause() }, resume: { source.resume() })
                source.gate = gate
                sink.onDemand { gate.add($0) }
                source.resume()
                return Cancellation { gate.stop() }
            }
            var received = 0
            for await value in stream {
                #expect(value == received, "round \(round)")
                received += 1
            }
            #expect(received == perRound, "round \(round)")
        }
    }

    /// The interleaving that hung Broadcast's pause/resume test about once in 100 000 rounds,
    /// made deterministic: an element yielded beyond the credit, taken by the consumer (who
    /// reports the room it left) before the producer gets to account for it. Spent before the
    /// yield, its spend clamps at zero while nobody can have seen it and the consumer's report
    /// resumes the source; spent after, it eats that report and the source stays paused with
    /// the stream believing it already gave the room.
    @Test func demandGate_spendBeforeYield_anElementBeyondTheCredit_cannotEatTheRoomReportedForTheNext() async {
        let log = Collected<String>()
        let gate = DemandGate(pause: { log.append("pause") }, resume: { log.append("resume") })
        let box = SinkBox<Int, Never>()
        var iterator = CallbackStream<Int, Never>(buffering: .suspending(1)) { sink in
            box.set(sink)
            sink.onDemand { gate.add($0) }  // 1 now: room for one
            _ = gate.spend()  // the one credit, spent (pause), then the element yielded
            sink.yield(0)
            return Cancellation()
        }.makeAsyncIterator()
        #expect(await iterator.next() == 0)  // taken: the consumer reported room for one more
        #expect(log.values == ["pause", "resume"])
        let sink = box.sink
        #expect(!gate.spend(), "credit spent again")
        sink.yield(1)
        #expect(gate.spend() == false, "beyond the credit: clamps at zero, before anybody saw it")
        sink.yield(2)  // buffered beyond capacity
        #expect(await iterator.next() == 1)
        #expect(await iterator.next() == 2, "the room it left is reported now")
        #expect(!gate.isPaused, "the source was resumed: the room was not eaten")
        #expect(gate.credits == 1)
        #expect(log.values == ["pause", "resume", "pause", "resume"])
        sink.finish()
        #expect(await iterator.next() == nil)
        box.clear()
    }

    @Test func demandGate_strictlyAlternates_andEndsInTheStateTheCreditsAsk() {
        let log = Collected<String>()
        let gate = DemandGate(pause: { log.append("pause") }, resume: { log.append("resume") })
        gate.add(2)
        #expect(gate.spend())
        #expect(!gate.spend())
        #expect(gate.isPaused)
        gate.add(1)
        #expect(!gate.isPaused)
        #expect(!gate.spend(3), "a chunk beyond the credit")
        #expect(gate.credits == 0, "never below zero: the stream's room already counts the excess")
        #expect(gate.isPaused)
        gate.add(1)
        #expect(!gate.isPaused)
        gate.stop()
        #expect(!gate.spend())
        #expect(log.values == ["pause", "resume", "pause", "resume"], "no call after stop()")
    }
}
