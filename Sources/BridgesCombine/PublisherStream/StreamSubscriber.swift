#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine
import Bridges

/// The subscriber behind ``Combine/Publisher/stream(buffering:onDrop:fileID:line:)``: yields
/// into a ``CallbackStream`` sink and turns the consumer's capacity into upstream demand.
///
/// - Demand-driven (waiting policies): every `count` the sink's `onDemand` reports becomes
///   `request(.max(count))`, so upstream's outstanding demand never exceeds the free buffer.
///   Demand reported before the subscription arrives is requested when it does.
/// - Otherwise `request(.unlimited)` once, and the policy decides what to keep.
/// - The subscription is cancelled at most once, and never after upstream completed.
///
/// Specialised per element: `Subscriber.receive(_:)` is a witness of a generic class, called by
/// upstream in its generic form, so it touches only non-generic state (``StreamSubscriberState``,
/// no runtime metadata look-ups) and yields through `yield`, a closure formed in the inlinable
/// `stream(buffering:)`, i.e. specialised in the caller for the concrete element type.
@usableFromInline
final class StreamSubscriber<Input, Failure: Error>: Subscriber, @unchecked Sendable {
    // @unchecked: mutable state is in `state`, behind its lock; the subscription and the sink
    // are called outside it.
    @usableFromInline typealias State = StreamSubscriberState

    private let state = LockedState(State())
    private let sink: CallbackStream<Input, Failure>.Sink
    /// `sink.yield(element)`, specialised where the stream was made; true if the stream is over.
    private let yield: @Sendable (sending Input) -> Bool
    private let demandDriven: Bool
    private let reporter: Reporter

    @usableFromInline
    init(
        sink: CallbackStream<Input, Failure>.Sink,
        yield: @escaping @Sendable (sending Input) -> Bool,
        demandDriven: Bool,
        reporter: Reporter
    ) {
        self.sink = sink
        self.yield = yield
        self.demandDriven = demandDriven
        self.reporter = reporter
    }

    // MARK: - Consumer side

    /// The sink's `onDemand`: the consumer can take `count` more elements.
    @usableFromInline
    func consumerCanTake(_ count: Int) {
        guard count > 0 else { return }
        let demand: Subscribers.Demand = count == .max ? .unlimited : .max(count)
        let subscription = state.withLock { state -> (any Subscription)? in
            switch state.upstream {
            case .awaiting:
                state.pendingDemand += demand
                return nil
            case .subscribed(let subscription):
                state.outstanding += demand
                return subscription
            case .done:
                return nil
            }
        }
        subscription?.request(demand)
    }

    /// The stream's teardown: the consumer went away (or the stream ended). Cancels once.
    @usableFromInline
    func cancelUpstream() {
        let subscription = state.withLock { state -> (any Subscription)? in
            defer { state.upstream = .done }
            if case .subscribed(let subscription) = state.upstream { return subscription }
            return nil
        }
        subscription?.cancel()
    }

    // MARK: - Subscriber

    @usableFromInline
    func receive(subscription: any Subscription) {
        let demand = state.withLock { state -> Subscribers.Demand? in
            guard case .awaiting = state.upstream else { return nil }
            state.upstream = .subscribed(subscription)
            guard demandDriven else { return .unlimited }
            defer { state.pendingDemand = .none }
            state.outstanding = state.pendingDemand
            return state.pendingDemand
        }
        guard let demand else {
            // A second subscription, or the consumer already left: Combine says cancel it.
            subscription.cancel()
            return
        }
        if demand > .none { subscription.request(demand) }
    }

    /// The rare path of `receive(_:)`, out of line: it touches the stream's generic
    /// `YieldResult`, whose metadata look-up the per-element path then no longer pays (≈ 340
    /// instructions per element under callgrind, publisher.range.rendezvous).
    @inline(never)
    func deliverBeforeSubscription(_ input: Input) {
        reporter.report(
            .other("valueBeforeSubscription"),
            "the publisher sent a value before calling receive(subscription:) (Combine's contract: the subscription first, then only what was requested); the stream delivers that value and finishes, and a subscription sent later is cancelled",
            bridge: self
        )
        nonisolated(unsafe) let element = input  // as in receive(_:)
        sink.yield(element)
        sink.finish()
    }

    @usableFromInline
    func receive(_ input: Input) -> Subscribers.Demand {
        let verdict = state.withLock { state -> StreamSubscriberVerdict in
            if case .awaiting = state.upstream {
                // A broken publisher: nothing was requested, and nothing could be. End here,
                // so that the consumer does not wait forever for a subscription.
                state.upstream = .done
                return .beforeSubscription
            }
            guard case .subscribed = state.upstream else { return .ignore }
            guard demandDriven else { return .yield }
            guard state.outstanding > .none else { return .excess }
            state.outstanding -= 1
            return .yield
        }
        switch verdict {
        case .ignore:
            // After cancel or completion: a late element in flight; the stream is over anyway.
            return .none
        case .beforeSubscription:
            deliverBeforeSubscription(input)
            return .none
        case .excess:
            reporter.report(
                .excessEmission,
                "the publisher sent an element it was not asked for (stream(buffering:) under a waiting policy requests only what fits); it was buffered beyond capacity, not dropped",
                bridge: self
            )
        case .yield:
            break
        }
        // `yield` takes its element `sending`; Combine's `receive(_:)` cannot say so. Only
        // `stream` (Output: Sendable) and `uncheckedStream` (the caller vouches) get here.
        nonisolated(unsafe) let element = input
        if yield(element) { cancelUpstream() }
        return .none
    }

    @usableFromInline
    func receive(completion: Subscribers.Completion<Failure>) {
        let first = state.withLock { state -> Bool in
            guard case .subscribed = state.upstream else { return false }
            state.upstream = .done
            return true
        }
        guard first else { return }
        switch completion {
        case .finished: sink.finish()
        case .failure(let error): sink.finish(throwing: error)
        }
    }
}

/// What `receive(_:)` does with an element (top level, not generic, like the state).
private enum StreamSubscriberVerdict { case yield, excess, ignore, beforeSubscription }

/// The subscriber's state: not nested in the generic class (that would make it generic too, and
/// every lock of it a runtime metadata look-up in the unspecialised witnesses).
@usableFromInline
struct StreamSubscriberState {
    enum Upstream {
        /// Created; `receive(subscription:)` not called yet.
        case awaiting
        case subscribed(any Subscription)
        /// Completed by upstream or cancelled by the consumer. Terminal.
        case done
    }

    var upstream: Upstream = .awaiting
    /// Demand the consumer made room for before the subscription arrived (demand-driven only).
    var pendingDemand: Subscribers.Demand = .none
    /// Requested and not yet received, as this subscriber counts it (demand-driven only).
    var outstanding: Subscribers.Demand = .none
}

#endif
