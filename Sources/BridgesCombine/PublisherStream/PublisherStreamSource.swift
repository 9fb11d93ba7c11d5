#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine
import Bridges

/// What every iteration of one `publisher.stream(buffering:)` starts from: made once per stream
/// and held by its builder only (whose only capture it is, so the builder closure needs no
/// context of its own). Each iteration's subscriber copies the little it needs, so that once
/// the stream has started (and the engine has let go of the builder) this object is freed,
/// unless the caller keeps the stream itself to iterate again.
///
/// Not generic over the publisher, so that the builder does not capture the publisher's type:
/// see ``PublisherStreamSource`` for the publisher.
@usableFromInline
class PublisherStreamConfig<Input, Failure: Error>: @unchecked Sendable {
    // @unchecked Sendable: every stored property is a `let` of a Sendable type (the subclass's
    // publisher is justified there).

    /// `sink.yieldWithinDemand(element)`, formed in the inlinable `stream(buffering:)`, i.e.
    /// specialised in the caller for the concrete element type.
    @usableFromInline let yield: @Sendable (CallbackStream<Input, Failure>.Sink, sending Input) -> DemandedYield

    @usableFromInline
    init(
        yield: @escaping @Sendable (CallbackStream<Input, Failure>.Sink, sending Input) -> DemandedYield
    ) {
        self.yield = yield
    }

    /// `publisher.subscribe(subscriber)`, overridden by ``PublisherStreamSource``: the builder
    /// holds this base class, so that it captures no `Self` metatype of the publisher (which
    /// need not be Sendable).
    @usableFromInline
    func subscribe(_ subscriber: StreamSubscriber<Input, Failure>) {
        preconditionFailure("PublisherStreamConfig is abstract")
    }
}

/// The publisher a stream subscribes to on each iteration, with the shared configuration.
///
/// Combine publishers are not declared `Sendable`, but a publisher is a description of how to
/// subscribe (a value) or a subject whose `subscribe` is thread-safe; the stream only ever calls
/// `subscribe`, once per iteration, from the consuming task — what `subscribe(on:)` does. Kept as
/// its concrete type (no `AnyPublisher` box per stream).
@usableFromInline
final class PublisherStreamSource<Upstream: Publisher>: PublisherStreamConfig<Upstream.Output, Upstream.Failure>,
    @unchecked Sendable
{
    // @unchecked Sendable: `publisher` is a `let`, only ever used to call `subscribe` (above).
    @usableFromInline let publisher: Upstream

    @usableFromInline
    init(
        _ publisher: Upstream,
        yield:
            @escaping @Sendable (CallbackStream<Upstream.Output, Upstream.Failure>.Sink, sending Upstream.Output) ->
            DemandedYield
    ) {
        self.publisher = publisher
        super.init(yield: yield)
    }

    @usableFromInline
    override func subscribe(_ subscriber: StreamSubscriber<Upstream.Output, Upstream.Failure>) {
        publisher.subscribe(subscriber)
    }
}

#endif
