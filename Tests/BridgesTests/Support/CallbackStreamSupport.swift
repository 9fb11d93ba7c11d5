import Bridges
import Dispatch
import TestSupport

/// Hands the sink of a stream's builder to the test, which then plays the producer.
final class SinkBox<Element, Failure: Error>: Sendable {
    private let state = LockedState<CallbackStream<Element, Failure>.Sink?>(nil)
    let ready = Signal()

    func set(_ sink: CallbackStream<Element, Failure>.Sink) {
        state.withLock { $0 = sink }
        ready.open()
    }

    /// The sink; traps if the builder has not run (tests await `ready` first).
    var sink: CallbackStream<Element, Failure>.Sink { state.withLock { $0! } }

    /// Releases the test's copy of the sink.
    func clear() { state.withLock { $0 = nil } }
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
