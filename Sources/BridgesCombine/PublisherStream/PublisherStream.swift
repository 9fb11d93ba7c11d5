#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine
import Bridges

extension Publisher where Output: Sendable {
    /// The publisher's elements as a `CallbackStream`, with demand derived from `buffering`,
    /// so that nothing is lost except what the policy says.
    ///
    /// Combine's `values` requests one element per `next()` and a `PassthroughSubject` simply
    /// drops what arrives in between: a slow consumer of a fast subject loses almost everything.
    ///
    /// Before: `for await items in facade.items.values { … }`  (loses values; iOS 15+)
    /// After:  `for await items in facade.items.stream(buffering: .unbounded) { … }`
    ///
    /// | policy | demand requested upstream | when the consumer is slow |
    /// |---|---|---|
    /// | `.unbounded` | `.unlimited` | everything is buffered |
    /// | `.latest`, `.drop`, `.dropNewest(n)`, `.dropOldest(n)` | `.unlimited` | the policy drops (`onDrop` sees each) |
    /// | `.rendezvous` | `.max(1)` per `next()` that finds nothing buffered | upstream waits (a demand-aware publisher); a subject drops, as with `values` |
    /// | `.suspending(n)` | `.max(n)` up front, then what the buffer has room for as the consumer takes (capacity − buffered − outstanding) | upstream never has more outstanding demand than free buffer, even after it sent more than asked |
    ///
    /// - Cold, like every `CallbackStream`: each iterator subscribes once, on its first `next()`.
    /// - `Failure == Never` iterates with `for await`; otherwise `for try await`, and the thrown
    ///   error is the publisher's `Failure`.
    /// - Ending the iteration (break, dropped iterator, cancelled task) cancels the subscription
    ///   exactly once; a publisher that completes is not cancelled.
    /// - A publisher that sends more than was requested under `.rendezvous`/`.suspending(n)` is
    ///   misbehaving: each such element is still buffered (beyond capacity, so nothing is lost)
    ///   and reported as `BridgeDiagnostic.Kind.excessEmission`.
    /// - Elements are yielded on the publisher's thread; the consumer receives them in its own
    ///   isolation.
    /// - `.drop` keeps only what arrives while the consumer waits in `next()`. The subscription is
    ///   made on the first `next()` but before the consumer waits, so what a synchronous publisher
    ///   (`Just`, `CurrentValueSubject`) sends while subscribing is dropped (and given to `onDrop`).
    @inlinable
    public func stream(
        buffering policy: BufferingPolicy,
        onDrop: (@Sendable (Output) -> Void)? = nil,
        fileID: String = #fileID,
        line: UInt = #line
    ) -> CallbackStream<Output, Failure> {
        makeStream(buffering: policy, onDrop: onDrop, fileID: fileID, line: line)
    }
}

extension Publisher {
    /// ``stream(buffering:onDrop:fileID:line:)`` for a publisher whose `Output` is not
    /// `Sendable`: the check is skipped, not the hazard. Use it only when each element is handed
    /// over and never touched again by the publisher's side (a fresh value per send), never for
    /// a shared mutable reference (`CurrentValueSubject<NSMutableArray, Never>` would hand one
    /// array to every consumer).
    @inlinable
    public func uncheckedStream(
        buffering policy: BufferingPolicy,
        onDrop: (@Sendable (Output) -> Void)? = nil,
        fileID: String = #fileID,
        line: UInt = #line
    ) -> CallbackStream<Output, Failure> {
        makeStream(buffering: policy, onDrop: onDrop, fileID: fileID, line: line)
    }

    @inlinable
    func makeStream(
        buffering policy: BufferingPolicy,
        onDrop: (@Sendable (Output) -> Void)?,
        fileID: String,
        line: UInt
    ) -> CallbackStream<Output, Failure> {
        // One object per stream, the builder's only capture (so the builder closure allocates no
        // context): the publisher as its concrete type and `yield`, formed here,
        // in inlinable code: specialised for the caller's element type. Held as its base class,
        // so that the builder captures no `Self` metatype (which need not be Sendable).
        let source: PublisherStreamConfig<Output, Failure> = PublisherStreamSource(
            self,
            yield: { sink, element in sink.yieldWithinDemand(element) }
        )
        return CallbackStream.synchronous(buffering: policy, onDrop: onDrop, fileID: fileID, line: line) { sink in
            // Under a waiting policy the subscriber registers the demand handler when the
            // subscription arrives.
            let subscriber = StreamSubscriber<Output, Failure>(sink: sink, config: source)
            source.subscribe(subscriber)
            // A teardown handler, not a `Cancellation`: no token object, and a closure whose
            // only capture is the subscriber, so no context either.
            return .onTermination { _ in subscriber.cancelUpstream() }
        }
    }
}

#endif
