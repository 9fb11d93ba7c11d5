import BridgesTesting
import Dispatch
import TestSupport
import Testing

@testable import Bridges

/// Runs `action` when released.
final class OnDeinit: Sendable {
    let action: @Sendable () -> Void
    init(_ action: @escaping @Sendable () -> Void) { self.action = action }
    deinit { action() }
}

extension CallbackStream.Sink {
    /// Whether the stream's lock is held right now (by any thread, this one included).
    var lockIsHeld: Bool { token.storage.state.lock.isHeld }
}

/// Demand handlers and pull sources: what a handler captures is released, a pull source is asked
/// once per wait, a producer actor sends from its own executor, and a one-element buffer needs no ring.
@Suite("CallbackStream: demand handlers and pull sources", .timeLimit(.minutes(3)))
struct CallbackStreamDemandTests {
    // MARK: - A demand handler that captures the sink
    // It forms a cycle (storage -> handler -> sink -> SinkToken -> storage) that the stream must
    // break when it ends, whichever way it ends.
    @Test(arguments: [BufferingPolicy.suspending(2), .rendezvous, .unbounded, .latest])
    func demandHandlerCapturingSink_isReleasedWhenConsumerBreaks(_ policy: BufferingPolicy) async {
        let weak = Weak<Canary>()
        let tornDown = Counter()
        // Only the waiting policies keep a demand handler: under the others the builder's return
        // releases the last copy of the sink, unfinished, which is reported.
        await expectDiagnostics(policy.isWaiting ? [] : [.sinkDropped]) {
            let stream = CallbackStream<Int, Never>(buffering: policy) { sink in
                let canary = Canary()
                weak.object = canary
                sink.onDemand { _ in
                    _ = sink
                    _ = canary
                }  // a pull source yields through the sink
                sink.yield(1)
                return Cancellation { tornDown.increment() }
            }
            for await _ in stream { break }
        }
        #expect(tornDown.value == 1)
        #expect(weak.object == nil, "the demand handler and the sink it captured outlive the stream (\(policy))")
    }

    @Test func demandHandlerCapturingSink_isReleasedWhenProducerFinishes() async {
        let weak = Weak<Canary>()
        let stream = CallbackStream<Int, Never>(buffering: .suspending(4)) { sink in
            let canary = Canary()
            weak.object = canary
            sink.onDemand { _ in
                _ = sink
                _ = canary
            }
            sink.yield(1)
            sink.finish()
            return Cancellation {}
        }
        var received: [Int] = []
        for await value in stream { received.append(value) }
        #expect(received == [1])
        #expect(weak.object == nil, "the demand handler outlives the finished stream")
    }

    // MARK: - Replacing a demand handler
    // The old handler, and whatever it captured, is released after the stream's lock is let go.
    @Test func replacedDemandHandler_isReleasedOutsideTheLock() async {
        let heldDuringDeinit = Collected<Bool>()
        let stream = CallbackStream<Int, Never>(buffering: .suspending(2)) { sink in
            sink.onDemand { [probe = OnDeinit { heldDuringDeinit.append(sink.lockIsHeld) }] _ in _ = probe }
            sink.onDemand { _ in }  // replaces the first handler
            sink.finish()
            return Cancellation {}
        }
        for await _ in stream {}
        #expect(heldDuringDeinit.values == [false], "user deinit ran while the stream's lock was held")
    }

    // MARK: - Memory
    // Under a capacity-1 policy the one element lives in the buffer's inline slot: no ring at all.
    @Test func latest_oneElement_allocatesNoRing() async {
        let slots = Collected<Int>()
        let stream = CallbackStream<Int, Never>(buffering: .latest) { sink in
            sink.yield(1)
            sink.yield(2)
            slots.append(sink.token.storage.state.withLock { $0.buffer.capacity + ($0.buffer.hasFirst ? 1 : 0) })
            sink.finish()
            return Cancellation {}
        }
        for await _ in stream {}
        #expect(slots.values == [1], "the one element of a .latest stream is not alone in the inline slot")
    }
}

/// A pull source: demand arrives on any thread and is served on a serial queue.
final class PullSource: @unchecked Sendable {  // all mutable state is touched only on `queue`
    let queue = DispatchQueue(label: "pull")
    var outstanding = 0
    var next = 0
    var violations: [String] = []
    let total: Int
    init(total: Int) { self.total = total }

    func demand(_ n: Int, sink: CallbackStream<Int, Never>.Sink) {
        queue.async { [self] in
            if n == Int.max {
                violations.append("unbounded demand")
                return
            }
            outstanding += n
            while outstanding > 0 && next < total {
                outstanding -= 1
                let result = sink.yield(next)
                next += 1
                if result == .stopProducing && outstanding != 0 && sink.isTerminated == false {
                    // .suspending(n>0): full buffer means no demand can be outstanding.
                    violations.append("stopProducing with \(outstanding) outstanding at \(next - 1)")
                }
                if case .dropped = result { violations.append("dropped \(next - 1)") }
            }
            if next == total {
                next += 1
                sink.finish()
            }
        }
    }
}

extension CallbackStreamDemandTests {
    @Test(arguments: [1, 2, 5])
    func pullSource_suspending_demandIsExact(_ capacity: Int) async {
        let total = 20_000
        let source = PullSource(total: total)
        let stream = CallbackStream<Int, Never>(buffering: .suspending(capacity)) { sink in
            sink.onDemand { [source] n in source.demand(n, sink: sink) }
            return Cancellation {}
        }
        var expected = 0
        for await value in stream {
            if value != expected {
                Issue.record("got \(value), expected \(expected)")
                break
            }
            expected += 1
        }
        #expect(expected == total)
        let violations = source.queue.sync { source.violations }
        #expect(violations.isEmpty, "\(violations.prefix(5))")
    }

    @Test func pullSource_rendezvous_demandIsOnePerWait() async {
        let total = 20_000
        let source = PullSource(total: total)
        let stream = CallbackStream<Int, Never>(buffering: .rendezvous) { sink in
            sink.onDemand { [source] n in source.demand(n, sink: sink) }
            return Cancellation {}
        }
        var expected = 0
        for await value in stream {
            if value != expected {
                Issue.record("got \(value), expected \(expected)")
                break
            }
            expected += 1
        }
        #expect(expected == total)
        // The consumer's final next() may ask for one more element just before the source's
        // finish() lands: one unit of demand can be left over, never more.
        let outstanding = source.queue.sync { source.outstanding }
        #expect(outstanding <= 1)
    }
}

extension CallbackStreamDemandTests {
    // `send` runs in the caller's isolation: an actor-isolated producer stays on its actor for
    // every send, and onDrop runs there, where the element was sent.
    @Test func actorProducer_sendRunsOnTheProducersActor() async {
        let onActor = Collected<Bool>()
        let box = SinkBox<Int, Never>()
        let stream = CallbackStream<Int, Never>(
            buffering: .latest, onDrop: { _ in onActor.append(QueueExecutor.isCurrent) }
        ) { sink in
            box.set(sink)
            sink.yield(0)
            return Cancellation {}
        }
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == 0)
        let back = await QueueProducer().send(box.sink, [1, 2, 3])
        #expect(back == [true, true, true])
        #expect(
            onActor.values == [true, true], "send's body ran off the producer's actor: a hop there and back per element"
        )
        box.sink.finish()
        box.clear()
        _ = consume iterator
    }
}
