import Bridges
import BridgesTesting
import Dispatch
import TestSupport
import Testing

/// How a consumer whose task is cancelled sees the end: a throwing stream (`Failure` that can
/// hold `CancellationError`) throws it from `next()`, so a truncated loop never reads as a
/// complete one; a non-throwing one returns nil; a stream that had already ended stays ended.
@Suite("CallbackStream: cancellation never reads as completion", .timeLimit(.minutes(3)))
struct CallbackStreamCancellationEndTests {
    /// How one consumer's loop ended.
    enum Ending: Equatable, Sendable {
        case finished([Int])
        case cancelled([Int])
        case failed([Int], String)
    }

    /// Runs `for try await` over `stream` in a task and records how it ended; `firstReceived`
    /// opens once the first element has arrived.
    static func consume<S: AsyncSequence & Sendable>(_ stream: S, firstReceived: Signal? = nil) -> Task<Ending, Never>
    where S.Element == Int {
        Task {
            var values: [Int] = []
            do {
                for try await value in stream {
                    values.append(value)
                    firstReceived?.open()
                }
                return .finished(values)
            } catch is CancellationError {
                return .cancelled(values)
            } catch {
                return .failed(values, "\(error)")
            }
        }
    }

    // MARK: - Throwing streams

    /// The suspended path: the consumer waits in `next()` when its task is cancelled.
    @Test func anyError_cancelledWhileWaiting_throwsCancellationError_afterTheTeardown() async {
        let probe = StreamProbe()
        let box = SinkBox<Int, any Error>()
        let received = Signal()
        let stream = CallbackStream<Int, any Error>.probed(probe, box: box)
        let task = Self.consume(stream, firstReceived: received)
        await box.ready.wait()
        box.sink.yield(1)
        await received.wait()
        task.cancel()
        #expect(await task.value == .cancelled([1]))
        #expect(probe.teardowns.value == 1, "the teardown ran before the loop ended")
        #expect(box.sink.yield(2) == .terminated)
        box.clear()
        await probe.proxyReleased.wait()
    }

    /// The fast path: elements buffered, the task cancelled between two of them.
    @Test func anyError_cancelledWithElementsBuffered_throwsCancellationError() async {
        let probe = StreamProbe()
        let box = SinkBox<Int, any Error>()  // the producer keeps its sink (a released one is misuse)
        let stream = CallbackStream<Int, any Error>.probed(probe, box: box) { sink in
            for value in 1...5 { sink.yield(value) }
        }
        let ending = await Task { () -> Ending in
            var values: [Int] = []
            do {
                for try await value in stream {
                    values.append(value)
                    if value == 2 { withUnsafeCurrentTask { $0?.cancel() } }
                }
                return .finished(values)
            } catch is CancellationError {
                return .cancelled(values)
            } catch {
                return .failed(values, "\(error)")
            }
        }.value
        #expect(ending == .cancelled([1, 2]))
        #expect(probe.teardowns.value == 1)
        box.clear()
        await probe.proxyReleased.wait()
    }

    /// Cancelled before the first `next()`: the builder never runs, and the loop throws.
    @Test func anyError_cancelledBeforeIterating_throwsWithoutRunningTheBuilder() async {
        let probe = StreamProbe()
        let stream = CallbackStream<Int, any Error>.probed(probe)
        let ending = await Task { () -> Ending in
            withUnsafeCurrentTask { $0?.cancel() }
            var iterator = stream.makeAsyncIterator()
            do {
                _ = try await iterator.next()
                return .finished([])
            } catch is CancellationError {
                // Thrown once: the next call sees an ended stream.
                return (try? await iterator.next()) == nil ? .cancelled([]) : .failed([], "an element after the end")
            } catch {
                return .failed([], "\(error)")
            }
        }.value
        #expect(ending == .cancelled([]))
        #expect(probe.builds.value == 0)
    }

    /// A producer that had finished, and a consumer that had seen the end: cancelling later
    /// changes nothing (nil, not an error).
    @Test func anyError_cancelledAfterTheEnd_returnsNil() async throws {
        let probe = StreamProbe()
        let stream = CallbackStream<Int, any Error>.probed(probe) { sink in
            sink.yield(1)
            sink.finish()
        }
        let values = try await Task { () throws -> [Int?] in
            var iterator = stream.makeAsyncIterator()
            let first = try await iterator.next()
            let end = try await iterator.next()
            withUnsafeCurrentTask { $0?.cancel() }
            return [first, end, try await iterator.next()]
        }.value
        #expect(values == [1, nil, nil])
        await probe.proxyReleased.wait()
    }

    /// `Failure == CancellationError` can hold it too.
    @Test func cancellationErrorFailure_cancelledWhileWaiting_throws() async {
        let probe = StreamProbe()
        let box = SinkBox<Int, CancellationError>()
        let stream = CallbackStream<Int, CancellationError>.probed(probe, box: box)
        let task = Self.consume(stream)
        await box.ready.wait()
        task.cancel()
        #expect(await task.value == .cancelled([]))
        box.clear()
        await probe.proxyReleased.wait()
    }

    // MARK: - Streams that cannot throw it

    /// A concrete `Failure` cannot hold `CancellationError` (`next()` is `throws(Failure)`): the
    /// loop ends with nil, as documented; the task's `isCancelled` tells the two apart.
    @Test func typedFailure_cancelledWhileWaiting_returnsNil() async {
        let probe = StreamProbe()
        let box = SinkBox<Int, TestError>()
        let stream = CallbackStream<Int, TestError>.probed(probe, box: box)
        let task = Self.consume(stream)
        await box.ready.wait()
        task.cancel()
        #expect(await task.value == .finished([]))
        box.clear()
        await probe.proxyReleased.wait()
    }

    @Test func never_cancelledWhileWaiting_returnsNil() async {
        let probe = StreamProbe()
        let box = SinkBox<Int, Never>()
        let stream = CallbackStream<Int, Never>.probed(probe, box: box)
        let task = Task { () -> [Int] in
            var values: [Int] = []
            for await value in stream { values.append(value) }
            return values
        }
        await box.ready.wait()
        task.cancel()
        #expect(await task.value == [])
        box.clear()
        await probe.proxyReleased.wait()
    }

    // MARK: - Vended throwing sequences

    @Test func throwingBroadcast_consumerCancelled_throwsCancellationError() async {
        let broadcast = ThrowingBroadcast<Int, any Error>()
        weak var released: AnyObject?
        released = broadcast
        let received = Signal()
        let task = Self.consume(broadcast.stream(), firstReceived: received)
        await broadcast.waitForSubscribers(1)
        _ = broadcast.yield(1)
        await received.wait()
        task.cancel()
        #expect(await task.value == .cancelled([1]))
        _ = consume broadcast
        #expect(released == nil)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func mapLatest_overAThrowingBase_consumerCancelled_throwsCancellationError() async {
        let probe = StreamProbe()
        let box = SinkBox<Int, any Error>()
        let base = CallbackStream<Int, any Error>.probed(probe, box: box)
        let received = Signal()
        let task = Self.consume(base.mapLatest { $0 * 10 }, firstReceived: received)
        await box.ready.wait()
        box.sink.yield(1)
        await received.wait()
        task.cancel()
        #expect(await task.value == .cancelled([10]))
        await probe.tornDown.wait()
        box.clear()
        await probe.proxyReleased.wait()
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func debounce_overAThrowingBase_consumerCancelled_throwsCancellationError() async {
        let clock = TestClock()
        let probe = StreamProbe()
        let box = SinkBox<Int, any Error>()
        let base = CallbackStream<Int, any Error>.probed(probe, box: box)
        let task = Self.consume(base.debounce(for: .milliseconds(300), clock: clock, buffering: .unbounded))
        await box.ready.wait()
        box.sink.yield(1)  // pending in the window: the consumer waits
        task.cancel()
        #expect(await task.value == .cancelled([]))
        await probe.tornDown.wait()
        box.clear()
        await probe.proxyReleased.wait()
    }

    // MARK: - Races

    /// Producer finish on one thread, consumer cancel on another: the loop throws
    /// `CancellationError` exactly when the cancellation ended the stream (the teardown learned
    /// `.cancelled`), and ends with nil exactly when the finish did.
    @Test func finishRacingCancel_theLoopEndsTheWayTheTeardownLearned_2_000_iterations() async {
        var cancelled = 0
        var finished = 0
        for _ in 0..<2_000 {
            let box = SinkBox<Int, any Error>()
            let learned = Collected<String>()
            let stream = CallbackStream<Int, any Error> { sink in
                box.set(sink)
                return .onTermination { termination in
                    switch termination {
                    case .cancelled: learned.append("cancelled")
                    case .finished: learned.append("finished")
                    case .failed: learned.append("failed")
                    }
                }
            }
            let task = Self.consume(stream)
            await box.ready.wait()
            let sink = box.sink
            let go = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                go.wait()
                sink.finish()
            }
            go.signal()
            task.cancel()
            let ending = await task.value
            #expect(learned.values.count == 1)
            switch (ending, learned.values.first) {
            case (.cancelled([]), "cancelled"): cancelled += 1
            case (.finished([]), "finished"): finished += 1
            default: Issue.record("the loop ended with \(ending) but the teardown learned \(learned.values)")
            }
            box.clear()
        }
        #expect(cancelled + finished == 2_000)
    }
}
