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
/// - Demand-driven (waiting policies): the sink's `onDemand` is registered when the subscription
///   arrives, and every `count` it reports becomes `request(.max(count))`, so upstream's
///   outstanding demand never exceeds the free buffer. The stream keeps the one count of it
///   (what it reported and no yield has used): it reports at registration what the consumer
///   already made room for, and tells each yield whether it was asked for.
/// - Otherwise the handler hears `Int.max` once, at registration: `request(.unlimited)`, and
///   the policy decides what to keep.
/// - The subscription is cancelled at most once, and never after upstream completed.
/// - An element takes the stream's lock only: the stream says whether it was asked for, and
///   whether the subscription had arrived (the demand handler is registered then).
///
/// Where it is with upstream is stored in the object itself, under a lock of the package's
/// striped lock table (shared with `Cancellation` and `withCallback`, picked by address) rather
/// than a lock object of its own, taken at subscription, completion and cancellation, never per
/// element; the teardown is a closure whose only capture is this object (no context).
///
/// Specialised per element: `Subscriber.receive(_:)` is a witness of a generic class, called by
/// upstream in its generic form, so it touches only non-generic state (stored first, at fixed
/// offsets; no runtime metadata look-ups) and yields through `yield`, a closure
/// formed in the inlinable `stream(buffering:)`, i.e. specialised in the caller.
@usableFromInline
final class StreamSubscriber<Input, Failure: Error>: Subscriber, @unchecked Sendable {
    // @unchecked: `upstream` is read and written only with this object's lock from the striped
    // lock table held; the rest is `let`. The subscription and the sink are called outside the
    // lock.

    /// Guarded by the lock.
    @exclusivity(unchecked) private var upstream: StreamSubscriberUpstream = .awaiting

    private let sink: CallbackStream<Input, Failure>.Sink
    /// `sink.yieldWithinDemand(element)`, specialised where the stream was made.
    private let yield: @Sendable (CallbackStream<Input, Failure>.Sink, sending Input) -> DemandedYield

    @usableFromInline
    init(sink: CallbackStream<Input, Failure>.Sink, config: PublisherStreamConfig<Input, Failure>) {
        self.sink = sink
        self.yield = config.yield
    }

    // MARK: - Consumer side

    /// The stream's teardown: the consumer went away (or the stream ended). Cancels once.
    @usableFromInline
    func cancelUpstream() {
        let subscription = Lock.striped(for: self).withLock { () -> (any Subscription & AnyObject)? in
            defer { upstream = .done }
            if case .subscribed(let subscription) = upstream { return subscription }
            return nil
        }
        subscription?.cancel()
    }

    // MARK: - Subscriber

    @usableFromInline
    func receive(subscription: any Subscription) {
        let reference = StreamSubscriberUpstream.reference(to: subscription)
        let accepted = Lock.striped(for: self).withLock { () -> Bool in
            guard case .awaiting = upstream else { return false }
            upstream = .subscribed(reference)
            return true
        }
        guard accepted else {
            // A second subscription, or the consumer already left: Combine says cancel it.
            subscription.cancel()
            return
        }
        // Reports at once the room the consumer already made (on this thread), then each room
        // that appears; under a lossy or unbounded policy, `Int.max` once (`.unlimited`), and
        // the stream keeps no handler. Registering it is also what tells the stream's yields
        // that the subscription has arrived (`.beforeDemand` until then), so that `receive(_:)`
        // takes no lock of ours per element. The handler holds the subscription itself, not
        // this subscriber: the stream releases it when it ends, so it keeps nothing alive after
        // that, and it reads no state of ours (no lock per request).
        // Combine subscriptions are not declared `Sendable`, but `request` is thread-safe by
        // Combine's contract (any thread may call it), which is all the handler does.
        nonisolated(unsafe) let subscription = reference
        sink.onDemand { count in
            subscription.request(count == .max ? .unlimited : .max(count))
        }
    }

    /// The rare path of `receive(_:)`, out of line: the element arrived before the subscription
    /// (the stream already took it). Ends the stream there, so that the consumer does not wait
    /// forever for a subscription; a subscription sent later is cancelled.
    @inline(never)
    func receiveBeforeSubscription() {
        let first = Lock.striped(for: self).withLock { () -> Bool in
            guard case .awaiting = upstream else { return false }
            upstream = .done
            return true
        }
        // The subscription arrived meanwhile (on another thread, racing this element): the
        // element was taken as sent beyond demand.
        guard first else { return reportExcess() }
        sink.report(
            .valueBeforeSubscription,
            "the publisher sent a value before calling receive(subscription:) (Combine's contract: the subscription first, then only what was requested); the stream delivers that value and finishes, and a subscription sent later is cancelled",
            bridge: self
        )
        sink.finish()
    }

    @inline(never)
    func reportExcess() {
        sink.report(
            .excessEmission,
            "the publisher sent an element it was not asked for (stream(buffering:) under a waiting policy requests "
                + "only what fits); it was buffered beyond capacity, not dropped. The publisher ignores Combine's "
                + "demand (a subject sent to from outside, a hand-written Publisher): put .buffer(size:prefetch:"
                + "whenFull:) in front of it, or use a policy that requests .unlimited (.unbounded, .latest).",
            bridge: self
        )
    }

    /// The stream's yield only, which also says whether the element was asked for (demand is
    /// counted once, by the stream) and whether the subscription has arrived (its demand
    /// handler registered): no lock of this subscriber's per element. An element after
    /// completion or cancellation finds the stream over and is discarded.
    @usableFromInline
    func receive(_ input: Input) -> Subscribers.Demand {
        // `yield` takes its element `sending`; Combine's `receive(_:)` cannot say so. Only
        // `stream` (Output: Sendable) and `uncheckedStream` (the caller vouches) get here.
        nonisolated(unsafe) let element = input
        switch yield(sink, element) {
        case .accepted: break
        case .beyondDemand: reportExcess()
        case .beforeDemand: receiveBeforeSubscription()
        case .terminated: cancelUpstream()
        }
        return .none
    }

    @usableFromInline
    func receive(completion: Subscribers.Completion<Failure>) {
        // The subscription is moved out and released here, after the lock: if this was its last
        // reference, its deinit must not run under a striped lock (it might take one itself,
        // and the stripe it picks can be this one).
        let subscription = Lock.striped(for: self).withLock { () -> (any Subscription & AnyObject)? in
            guard case .subscribed(let subscription) = upstream else { return nil }
            upstream = .done
            return subscription
        }
        guard subscription != nil else { return }
        withExtendedLifetime(subscription) {}
        switch completion {
        case .finished: sink.finish()
        case .failure(let error): sink.finish(throwing: error)
        }
    }
}

/// Where the subscriber is with upstream: not nested in the generic class (that would make it
/// generic too, and every access of it a runtime metadata look-up in the unspecialised witnesses).
///
/// 16 bytes, not 40: the subscription is held as a class existential (an object and a witness
/// table) rather than `any Subscription` (a three-word inline buffer, its type and a witness
/// table). Subscriptions are objects in practice; one that is a value (`Subscriptions.empty`) is
/// boxed in a ``SubscriptionBox``, one allocation for that rare case.
@usableFromInline
enum StreamSubscriberUpstream {
    /// Created; `receive(subscription:)` not called yet.
    case awaiting
    case subscribed(any Subscription & AnyObject)
    /// Completed by upstream or cancelled by the consumer. Terminal.
    case done

    /// `subscription` itself if it is an object, otherwise a box that forwards to it.
    static func reference(to subscription: any Subscription) -> any Subscription & AnyObject {
        // A value cast to plain `AnyObject` succeeds (the runtime boxes it); cast to
        // `Subscription & AnyObject` it fails with this toolchain, and the metatype check keeps
        // it that way on every runtime: only a class instance takes the direct path.
        if type(of: subscription) is AnyClass, let object = subscription as? any Subscription & AnyObject {
            return object
        }
        return SubscriptionBox(subscription)
    }
}

/// A subscription that is a value, made an object (see ``StreamSubscriberUpstream``).
final class SubscriptionBox: Subscription {
    let subscription: any Subscription
    init(_ subscription: any Subscription) { self.subscription = subscription }
    func request(_ demand: Subscribers.Demand) { subscription.request(demand) }
    func cancel() { subscription.cancel() }
}

#endif
