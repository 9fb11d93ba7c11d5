import Bridges
import Dispatch
import TestSupport
import Testing

/// Hands the sink of a stream's builder to the test, which then plays the producer.
///
/// `await box.ready.wait()` returns once the builder has run, or when the test is cancelled
/// first (its time limit). Then the box holds a stand-in: the sink of a stream that has already
/// ended (`yield` answers `.terminated`), and an issue says why; the test goes on to fail
/// instead of crashing the whole run on a missing sink.
final class SinkBox<Element, Failure: Error>: Sendable {
    typealias Sink = CallbackStream<Element, Failure>.Sink
    fileprivate struct State {
        var sink: Sink?
        /// The builder ran (or a stand-in took its place): `ready.wait()` returns at once.
        var built = false
    }

    private let state: LockedState<State>
    let ready: Ready

    init() {
        state = LockedState(State())
        ready = Ready(state)
    }

    func set(_ sink: Sink) {
        state.withLock {
            $0.sink = sink
            $0.built = true
        }
        ready.signal.open()
    }

    /// The sink (or, after a cancelled wait, the stand-in). Read it after `ready.wait()`, which
    /// always leaves one here: only a test that reads it without waiting, or after `clear()`
    /// (a bug in the test, not a time limit), finds none.
    var sink: Sink {
        guard let sink = state.withLock({ $0.sink }) else {
            preconditionFailure(
                "SinkBox.sink was read before the stream's builder ran, or after clear(): await box.ready.wait() first")
        }
        return sink
    }

    /// Releases the test's copy of the sink.
    func clear() { state.withLock { $0.sink = nil } }

    /// Opens when the builder has handed over its sink.
    final class Ready: Sendable {
        let signal = Signal()
        private let state: LockedState<State>

        fileprivate init(_ state: LockedState<State>) { self.state = state }

        /// Returns once the builder has run; if the test is cancelled first, records an issue
        /// and leaves an ended stream's sink in the box, so that the test's next steps fail
        /// instead of trapping.
        func wait(sourceLocation: SourceLocation = #_sourceLocation) async {
            await signal.wait()
            if state.withLock({ $0.built }) { return }
            Issue.record(
                "the wait for the stream's builder ended before the builder ran: the test was cancelled (its time limit?); the test goes on with the sink of an ended stream",
                sourceLocation: sourceLocation)
            let standIn: Sink = await endedSink()
            state.withLock { state in
                guard !state.built else { return }
                state.sink = standIn
                state.built = true
            }
        }
    }
}

/// The sink of a `CallbackStream` whose consumer has already been cancelled: `yield` answers
/// `.terminated`, and nothing is reported. A stand-in for a sink that a cancelled test waited
/// for in vain. Made in a task of its own, which a cancelled test cannot cut short.
func endedSink<Element, Failure: Error>() async -> CallbackStream<Element, Failure>.Sink {
    await Task.detached {
        let handOver = LockedState<CallbackStream<Element, Failure>.Sink?>(nil)
        let built = Signal()
        let stream = CallbackStream<Element, Failure>(buffering: .unbounded) { sink in
            handOver.withLock { $0 = sink }
            built.open()
            return Cancellation()
        }
        let consumer = Task {
            var iterator = stream.makeAsyncIterator()
            _ = try? await iterator.next()
        }
        await built.wait()
        consumer.cancel()
        await consumer.value
        guard let sink = handOver.withLock({ $0 }) else {
            preconditionFailure("the builder ran and handed over no sink")
        }
        return sink
    }.value
}

/// Counts teardowns and builder runs of the streams it builds, and signals each teardown.
final class StreamProbe: Sendable {
    let builds = Counter()
    let teardowns = Counter()
    let tornDown = Signal()
    let proxyReleased = Signal()
    let proxy = Weak<ProbeProxy>()
}

/// Stands in for a delegate proxy: only the stream keeps it alive.
final class ProbeProxy: Sendable {
    let canary: Canary
    init(released: Signal) { canary = Canary(released: released) }
}

extension CallbackStream {
    /// A probed stream whose builder only hands its sink to `box`.
    static func probed(
        _ probe: StreamProbe,
        box: SinkBox<Element, Failure>? = nil,
        buffering: BufferingPolicy = .unbounded,
        onDrop: (@Sendable (Element) -> Void)? = nil
    ) -> CallbackStream {
        probed(probe, box: box, buffering: buffering, onDrop: onDrop) { _ in }
    }

    /// A stream whose builder records into `probe`, creates a proxy kept alive only by the
    /// teardown, and hands the sink to `box` (and to `body`, which may yield synchronously).
    static func probed(
        _ probe: StreamProbe,
        box: SinkBox<Element, Failure>? = nil,
        buffering: BufferingPolicy = .unbounded,
        onDrop: (@Sendable (Element) -> Void)? = nil,
        _ body: @escaping @Sendable (Sink) -> Void
    ) -> CallbackStream {
        CallbackStream(buffering: buffering, onDrop: onDrop) { sink in
            probe.builds.increment()
            let proxy = ProbeProxy(released: probe.proxyReleased)
            probe.proxy.object = proxy
            box?.set(sink)
            body(sink)
            return Cancellation {
                probe.teardowns.increment()
                _ = proxy
                probe.tornDown.open()
            }
        }
    }
}
