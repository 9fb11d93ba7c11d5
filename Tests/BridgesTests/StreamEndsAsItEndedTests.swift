import Bridges
import BridgesTesting
import Dispatch
import TestSupport
import Testing

/// A stream that ended stays ended *as it ended*: a failure stored before a cancellation is
/// thrown, never `nil`; a producer that released its sink without finishing ends a throwing
/// stream with ``BridgeError/sinkDropped``, never as a complete loop.
@Suite("CallbackStream: a stream ends as it ended", .timeLimit(.minutes(3)))
struct StreamEndsAsItEndedTests {
    typealias Ending = CallbackStreamCancellationEndTests.Ending

    // MARK: - A failure stored before a cancellation

    /// The consumer takes the only element; while its loop body runs the producer fails; then
    /// the consumer's task is cancelled. The failure had ended the stream: it is thrown.
    @Test func failureStoredWhileTheLoopBodyRuns_thenCancelled_throwsTheFailure() async {
        let probe = StreamProbe()
        let box = SinkBox<Int, any Error>()
        let inBody = Signal()
        let proceed = Signal()
        let stream = CallbackStream<Int, any Error>.probed(probe, box: box)
        let task = Task { () -> Ending in
            var values: [Int] = []
            do {
                for try await value in stream {
                    values.append(value)
                    inBody.open()
                    await proceed.wait()
                }
                return .finished(values)
            } catch is CancellationError {
                return .cancelled(values)
            } catch {
                return .failed(values, "\(error)")
            }
        }
        await box.ready.wait()
        box.sink.yield(1)
        await inBody.wait()
        box.sink.finish(throwing: TestError(code: 7))
        task.cancel()
        proceed.open()
        #expect(await task.value == .failed([1], "TestError(code: 7)"))
        #expect(probe.teardowns.value == 1)
        box.clear()
        await probe.proxyReleased.wait()
    }

    /// The same with the consumer suspended while the producer's teardown still runs on the
    /// producer's thread: the cancellation that comes meanwhile does not replace the failure.
    @Test func failureWhileTheTeardownRuns_cancelledMeanwhile_throwsTheFailure() async {
        let teardownStarted = Signal()
        let releaseTeardown = DispatchSemaphore(value: 0)
        let box = SinkBox<Int, any Error>()
        let stream = CallbackStream<Int, any Error>(buffering: .unbounded) { sink in
            box.set(sink)
            return Cancellation {
                teardownStarted.open()
                releaseTeardown.wait()  // the producer's thread, not the consumer's: nothing waits for it
            }
        }
        let task = CallbackStreamCancellationEndTests.consume(stream)
        await box.ready.wait()
        let sink = box.sink
        box.clear()
        DispatchQueue.global().async { sink.finish(throwing: TestError(code: 3)) }
        await teardownStarted.wait()
        task.cancel()
        releaseTeardown.signal()
        #expect(await task.value == .failed([], "TestError(code: 3)"))
    }

    /// `finish(throwing:)` against `cancel()`, many rounds: each loop ends by throwing the
    /// failure or `CancellationError`, whichever came first; never as a complete loop.
    @Test func finishThrowingRacingCancel_neverEndsAsComplete() async {
        var outcomes: [String: Int] = [:]
        // When the cancellation wins, the failure reaches nobody and is reported (as
        // `.yieldAfterFinish`): collected here, and nothing else may be reported.
        let reported = LockedState<[BridgeDiagnostic.Kind]>([])
        await Diagnostics.withHandler({ diagnostic in reported.withLock { $0.append(diagnostic.kind) } }) {
            await Self.raceFinishThrowingAgainstCancel(&outcomes)
        }
        #expect(outcomes["finished"] == nil, "\(outcomes)")
        #expect(reported.withLock { $0 }.allSatisfy { $0 == .yieldAfterFinish })
    }

    static func raceFinishThrowingAgainstCancel(_ outcomes: inout [String: Int]) async {
        for _ in 0..<2_000 {
            let box = SinkBox<Int, any Error>()
            let received = Signal()
            let stream = CallbackStream<Int, any Error>(buffering: .unbounded) { sink in
                box.set(sink)
                return Cancellation {}
            }
            let task = CallbackStreamCancellationEndTests.consume(stream, firstReceived: received)
            await box.ready.wait()
            let sink = box.sink
            box.clear()
            sink.yield(1)
            await received.wait()
            DispatchQueue.concurrentPerform(iterations: 2) { side in
                if side == 0 { sink.finish(throwing: TestError(code: 1)) } else { task.cancel() }
            }
            switch await task.value {
            case .finished: outcomes["finished", default: 0] += 1
            case .cancelled: outcomes["cancelled", default: 0] += 1
            case .failed(_, let error):
                #expect(error == "TestError(code: 1)")
                outcomes["failed", default: 0] += 1
            }
        }
    }

    @Test func throwingBroadcast_failedThenConsumerCancelled_throwsTheFailure() async {
        let broadcast = ThrowingBroadcast<Int, any Error>()
        let released = Weak(broadcast)
        let inBody = Signal()
        let proceed = Signal()
        let stream = broadcast.stream()
        let task = Task { () -> Ending in
            var values: [Int] = []
            do {
                for try await value in stream {
                    values.append(value)
                    inBody.open()
                    await proceed.wait()
                }
                return .finished(values)
            } catch is CancellationError {
                return .cancelled(values)
            } catch {
                return .failed(values, "\(error)")
            }
        }
        await broadcast.waitForSubscribers(1)
        broadcast.yield(1)
        await inBody.wait()
        broadcast.finish(throwing: TestError(code: 2))
        task.cancel()
        proceed.open()
        #expect(await task.value == .failed([1], "TestError(code: 2)"))
        _ = consume broadcast
        #expect(released.object == nil)
    }

    // MARK: - A lost producer

    /// A throwing stream whose producer released every copy of its sink without finishing ends
    /// with `BridgeError.sinkDropped` (as Kotlin's `callbackFlow` fails without `awaitClose`),
    /// and the misuse is reported once, as before.
    @Test func throwingStream_producerReleasedTheSink_throwsSinkDropped_andReports() async {
        let probe = StreamProbe()
        let box = SinkBox<Int, any Error>()
        let received = Signal()
        let ending = await expectDiagnostics([.sinkDropped]) { () async -> Ending in
            // Made inside: a bridge reports to the handler in force where it was made.
            let stream = CallbackStream<Int, any Error>.probed(probe, box: box)
            let task = CallbackStreamCancellationEndTests.consume(stream, firstReceived: received)
            await box.ready.wait()
            box.sink.yield(1)
            await received.wait()
            box.clear()  // the only copy: the producer is gone without finish()
            return await task.value
        }
        #expect(ending == .failed([1], "\(BridgeError.sinkDropped)"))
        await probe.proxyReleased.wait()
    }

    /// The error is caught by name.
    @Test func sinkDropped_isCaughtByName() async {
        await expectDiagnostics([.sinkDropped]) {
            let stream = CallbackStream<Int, any Error>(buffering: .unbounded) { _ in Cancellation {} }
            do {
                for try await _ in stream {}
                Issue.record("the loop ended as if complete")
            } catch BridgeError.sinkDropped {
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }

    /// A non-throwing stream ends as before: `nil`, reported.
    @Test func nonThrowingStream_producerReleasedTheSink_endsWithNil_andReports() async {
        let values = await expectDiagnostics([.sinkDropped]) { () async -> [Int] in
            let stream = CallbackStream<Int, Never>(buffering: .unbounded) { sink in
                sink.yield(1)
                return Cancellation {}
            }
            var values: [Int] = []
            for await value in stream { values.append(value) }
            return values
        }
        #expect(values == [1])
    }

    /// Elements yielded before the producer was lost are delivered first.
    @Test func throwingStream_producerLost_bufferedElementsFirst_thenSinkDropped() async {
        let ending = await expectDiagnostics([.sinkDropped]) {
            let stream = CallbackStream<Int, any Error>(buffering: .unbounded) { sink in
                sink.yield(1)
                sink.yield(2)
                return Cancellation {}
            }
            return await CallbackStreamCancellationEndTests.consume(stream).value
        }
        #expect(ending == .failed([1, 2], "\(BridgeError.sinkDropped)"))
    }

    /// A `ThrowingBroadcast` released without `finish()` lost its producer: its consumers get
    /// what was sent, then `BridgeError.sinkDropped`, never a complete loop.
    @Test func throwingBroadcast_releasedWithoutFinish_endsItsConsumersWithSinkDropped() async {
        var broadcast: ThrowingBroadcast<Int, any Error>? = ThrowingBroadcast<Int, any Error>()
        let released = Weak(broadcast!)
        let consumer = CallbackStreamCancellationEndTests.consume(broadcast!.stream())
        await broadcast!.waitForSubscribers(1)
        broadcast!.yield(1)
        broadcast = nil
        #expect(await consumer.value == .failed([1], "\(BridgeError.sinkDropped)"))
        #expect(released.object == nil)
    }

    /// A broadcast whose typed failure cannot hold `BridgeError` has no error to end with: its
    /// consumers finish normally when it is released (as a `Broadcast<Element>` does).
    @Test func typedThrowingBroadcast_releasedWithoutFinish_finishesItsConsumers() async {
        var broadcast: ThrowingBroadcast<Int, TestError>? = ThrowingBroadcast<Int, TestError>()
        let released = Weak(broadcast!)
        let consumer = CallbackStreamCancellationEndTests.consume(broadcast!.stream())
        await broadcast!.waitForSubscribers(1)
        broadcast!.yield(1)
        broadcast = nil
        #expect(await consumer.value == .finished([1]))
        #expect(released.object == nil)
    }

    /// An operator over a throwing stream whose producer was lost ends with the same error: the
    /// upstream's `sinkDropped` is a failure like any other, not an end. (The failure cancels a
    /// transform still running, as any upstream failure does: 10 may or may not come first.)
    @Test func mapLatest_overALostProducer_throwsSinkDropped() async {
        let probe = StreamProbe()
        let ending = await expectDiagnostics([.sinkDropped]) { () async -> Ending in
            let upstream = CallbackStream<Int, any Error>.probed(probe) { sink in
                sink.yield(1)  // then the builder returns without keeping the sink
            }
            return await CallbackStreamCancellationEndTests.consume(upstream.mapLatest { $0 * 10 }).value
        }
        let dropped = "\(BridgeError.sinkDropped)"
        #expect(ending == .failed([10], dropped) || ending == .failed([], dropped))
        await probe.proxyReleased.wait()
    }

    /// `shared()` of a throwing stream whose producer was lost: the consumer's loop throws the
    /// upstream's `sinkDropped` (reported once, by the stream that lost its producer).
    @Test func shared_overALostProducer_theConsumerThrowsSinkDropped() async {
        let probe = StreamProbe()
        let ending = await expectDiagnostics([.sinkDropped]) { () async -> Ending in
            let upstream = CallbackStream<Int, any Error>.probed(probe) { sink in
                sink.yield(1)
            }
            return await CallbackStreamCancellationEndTests.consume(upstream.shared().stream()).value
        }
        #expect(ending == .failed([1], "\(BridgeError.sinkDropped)"))
        await probe.proxyReleased.wait()
    }

    // MARK: - Broadcast: a send's answer says what happened to its element

    /// A producer waits in `await send(3)` for a `.suspending(1)` subscriber; on the producer's
    /// actor, `finish()` and then the producer's task is cancelled: element 3 reached nobody (an
    /// `.unbounded` subscriber present throughout never got it), so the answer is `.terminated`,
    /// and nothing is reported (the send began before the finish: no misuse).
    @Test func broadcastSend_waitingWhenFinishedThenCancelled_answersTerminated() async {
        let events = Broadcast<Int>()
        let released = Weak(events)
        let producer = WaitingBroadcastProducer()
        let slow = events.stream(buffering: .suspending(1))
        let all = events.stream(buffering: .unbounded).record()
        let leave = Signal()
        let slowConsumer = Task { () -> Int? in
            var iterator = slow.makeAsyncIterator()
            let value = await iterator.next()  // subscribes, takes 1, then takes nothing more
            await leave.wait()
            return value
        }
        await events.waitForSubscribers(2)
        await expectDiagnostics([]) {
            await producer.start(events)
            #expect((try? await all.next()) == 1)
            #expect((try? await all.next()) == 2)  // 2 fills the slow subscriber: send(3) waits
            #expect(await producer.finishAndCancel(events) == 3, "send(3) was waiting")
            #expect(await producer.answers() == [".enqueued", ".enqueued", ".terminated"])
        }
        await all.expectFinished()
        #expect(all.elements == [1, 2])
        leave.open()
        #expect(await slowConsumer.value == 1)
        _ = consume events
        #expect(released.object == nil)
    }
}

/// A producer actor whose sends are one task; `finishAndCancel` runs on the same actor while
/// that task waits in `send`.
actor WaitingBroadcastProducer {
    private var sending: Task<[String], Never>?
    private var stage = 0

    func start(_ events: Broadcast<Int>) {
        sending = Task {
            var answers: [String] = []
            for value in 1...3 {
                stage = value
                answers.append("\(await events.send(value))")
            }
            return answers
        }
    }

    /// Finishes the broadcast and cancels the sending task in one step on the actor; returns
    /// which send was in progress.
    func finishAndCancel(_ events: Broadcast<Int>) -> Int {
        events.finish()
        sending?.cancel()
        return stage
    }

    func answers() async -> [String] { await sending?.value ?? [] }
}
