#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine
import Bridges

/// One subscription to an ``AsyncSequencePublisher``: a lock around
/// ``AsyncSequenceSubscriptionStateMachine`` (demand, the subscriber) and the iterating task, an
/// `OwnedTask` (Bridges' one owned-task core).
///
/// The subscriber is called only from the iterating task, one call at a time, never with a lock
/// held, through the core: once `cancel()` has returned no `receive` call starts (a call in
/// progress on another thread is waited for; a `cancel()` from inside `receive(_:)` returns at
/// once). `request(_:)` and `cancel()` may come from any thread, including from inside
/// `receive(_:)`.
final class AsyncSequenceSubscription<Base: AsyncSequence & Sendable, Failure: Error>:
    Subscription, @unchecked Sendable  // all mutable state is in `state`, behind its lock; the
// subscriber inside it is only called from the iterating task, serially, as Combine requires
where Base.Element: Sendable {
    /// Erased so that the iterating task captures no subscriber metatype (which need not be Sendable).
    typealias Downstream = AnySubscriber<Base.Element, Failure>

    private let state: LockedState<AsyncSequenceSubscriptionStateMachine<Downstream>>
    private let core = OwnedTask()
    private let base: Base
    private let failure: @Sendable (any Error) -> Failure
    private let site: CallSite
    private let endsAfterOneElement: Bool
    private let isolation: (any Actor)?

    init<S: Subscriber>(
        base: Base, subscriber: S, failure: @escaping @Sendable (any Error) -> Failure, endsAfterOneElement: Bool,
        isolation: (any Actor)?, site: CallSite
    ) where S.Input == Base.Element, S.Failure == Failure {
        self.base = base
        self.failure = failure
        self.site = site
        self.endsAfterOneElement = endsAfterOneElement
        self.isolation = isolation
        // The downstream subscriber is not Sendable, but Combine calls it serially, and this
        // subscription calls it only after taking it out of the lock-guarded state machine.
        self.state = LockedState(
            vouchingFor: AsyncSequenceSubscriptionStateMachine(subscriber: AnySubscriber(subscriber)))
    }

    /// Called by the publisher once `subscriber.receive(subscription:)` has returned.
    func didSubscribe() {
        if case .startTask = state.withLock({ $0.didSubscribe() }) {
            let isolation = self.isolation
            core.attach(Task { await self.iterate(isolation: isolation) })
        }
    }

    func request(_ demand: Subscribers.Demand) {
        switch state.withLock({ $0.request(demand) }) {
        case .none:
            break
        case .reportInvalidDemand:
            site.report(
                .invalidDemand,
                "request(.none) on a subscription to an AsyncSequence publisher; the request was ignored. Request "
                    + ".max(n) with n ≥ 1 or .unlimited (returning .none from receive(_:) is fine: it asks for nothing more).",
                bridge: self
            )
        case .resume(let waiter):
            waiter.resume(returning: true)
        }
    }

    func cancel() {
        guard case .cancel(let waiter, let subscriber) = state.withLock({ $0.cancel() }) else { return }
        core.cancel()  // cancels the task; returns once no `receive` call is in progress elsewhere
        waiter?.resume(returning: false)
        _ = subscriber  // released here, outside the lock
    }

    /// The body of the iterating task, run in the isolation `publisher()` was called in (the main
    /// actor for a `@MainActor` caller, so its `sink` closures run there): one `next()` ahead,
    /// then one unit of demand, then one emission.
    private func iterate(isolation: isolated (any Actor)?) async {
        guard core.isActive else { return }  // cancelled before the task ran: make no iterator
        // A one-element sequence (`AsyncFuture`) stays lazy: its work starts with the first demand.
        if endsAfterOneElement { guard await awaitDemand() else { return } }
        do {
            for try await element in base {
                if !endsAfterOneElement { guard await awaitDemand() else { return } }  // cancelled: dropped
                guard let subscriber = state.withLock({ $0.subscriberForEmission() }) else { return }
                var additional = Subscribers.Demand.none
                guard core.callHandler({ additional = subscriber.receive(element) }) else { return }
                if endsAfterOneElement { break }
                state.withLock { $0.received(additional: additional) }
                guard core.isActive else { return }  // cancelled inside `receive`: fetch nothing more
            }
        } catch {
            complete(.failure(failure(error)))
            return
        }
        complete(.finished)  // exhausted: no demand needed (as Combine's Publishers.Sequence)
    }

    private func complete(_ completion: Subscribers.Completion<Failure>) {
        guard let subscriber = state.withLock({ $0.finish() }) else { return }
        core.finish { subscriber.receive(completion: completion) }
    }

    /// Takes one unit of demand, suspending while there is none. False once the subscription ended.
    private func awaitDemand() async -> Bool {
        switch state.withLock({ $0.takeDemand() }) {
        case .proceed: return true
        case .stop: return false
        case .wait: break
        }
        return await withUnsafeContinuation { waiter in
            if case .resume(let waiter, let proceed) = state.withLock({ $0.awaitDemand(waiter) }) {
                waiter.resume(returning: proceed)
            }
        }
    }

    var description: String { "AsyncSequenceSubscription(\(Base.self))" }
}

#endif
