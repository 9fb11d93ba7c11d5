#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine

/// The demand bookkeeping of one subscription to an ``AsyncSequencePublisher``: a pure value,
/// no locks, no continuations resumed, no subscriber called. ``AsyncSequenceSubscription`` runs
/// each event under its lock and acts on the returned action after releasing it.
///
/// The rules it enforces:
/// - iteration starts once the subscriber has returned from `receive(subscription:)`, with or
///   without demand: the task asks the sequence for one element ahead, so an empty or exhausted
///   sequence completes without waiting for demand (as Combine's own publishers do);
/// - one unit of demand is taken *before* each emission, so the subscriber never receives more
///   than it requested, and iteration pauses (holding at most the one element it fetched ahead)
///   at zero demand;
/// - the subscriber is moved out of the state when the subscription ends, so completion is sent
///   at most once. The task itself lives in an `OwnedTask` (see `AsyncSequenceSubscription`).
struct AsyncSequenceSubscriptionStateMachine<Downstream> {
    /// A suspended iterating task waiting for demand; resumed with `true` to go on, `false` to stop.
    typealias Waiter = UnsafeContinuation<Bool, Never>

    private enum Phase {
        /// Entered at creation; the publisher is still inside `subscriber.receive(subscription:)`.
        /// Demand requested meanwhile is kept. Left by `didSubscribe()` (→ `.running`) or
        /// `cancel()` (→ `.terminated`).
        case subscribing(Downstream, demand: Subscribers.Demand)
        /// The iterating task exists (or is about to). `demand` is what was requested and not
        /// yet taken by the task; `waiter` is the task suspended, holding an element, because
        /// `demand` was zero. Left by `cancel()` or `finish()`.
        case running(Downstream, demand: Subscribers.Demand, waiter: Waiter?)
        /// Cancelled or completed. Terminal: every later event is a no-op.
        case terminated
    }

    private var phase: Phase

    init(subscriber: Downstream) {
        phase = .subscribing(subscriber, demand: .none)
    }

    // MARK: - Subscription

    enum DidSubscribeAction {
        case none
        case startTask
    }

    /// The publisher returned from `subscriber.receive(subscription:)`: start iterating.
    mutating func didSubscribe() -> DidSubscribeAction {
        switch phase {
        case .subscribing(let subscriber, let demand):
            phase = .running(subscriber, demand: demand, waiter: nil)
            return .startTask
        case .terminated:
            return .none
        case .running:
            preconditionFailure("Internal inconsistency: \(phase) received didSubscribe()")
        }
    }

    // MARK: - Request

    enum RequestAction {
        case none
        /// `request(.none)`: report and ignore.
        case reportInvalidDemand
        /// Wake the task waiting for demand; one unit was taken on its behalf.
        case resume(Waiter)
    }

    mutating func request(_ demand: Subscribers.Demand) -> RequestAction {
        guard demand > .none else { return .reportInvalidDemand }
        switch phase {
        case .subscribing(let subscriber, let pending):
            phase = .subscribing(subscriber, demand: pending + demand)
            return .none
        case .running(let subscriber, let pending, let waiter):
            guard let waiter else {
                phase = .running(subscriber, demand: pending + demand, waiter: nil)
                return .none
            }
            // The waiting task goes on to emit its element: it takes one unit of the new demand.
            phase = .running(subscriber, demand: pending + demand - 1, waiter: nil)
            return .resume(waiter)
        case .terminated:
            return .none
        }
    }

    // MARK: - Task

    enum TakeDemandResult {
        /// One unit of demand was taken: emit the element the task holds.
        case proceed
        /// Demand is zero: suspend (see ``awaitDemand(_:)``).
        case wait
        /// The subscription ended: stop iterating.
        case stop
    }

    /// The task holds an element and wants to emit it.
    mutating func takeDemand() -> TakeDemandResult {
        switch phase {
        case .running(let subscriber, let demand, nil):
            guard demand > .none else { return .wait }
            phase = .running(subscriber, demand: demand - 1, waiter: nil)
            return .proceed
        case .terminated:
            return .stop
        case .subscribing, .running:
            preconditionFailure("Internal inconsistency: \(phase) received takeDemand()")
        }
    }

    enum AwaitDemandAction {
        /// The waiter was stored; a later `request(_:)` or `cancel()` resumes it.
        case none
        case resume(Waiter, Bool)
    }

    /// The task found no demand and suspended with `waiter` (demand may have arrived meanwhile).
    mutating func awaitDemand(_ waiter: Waiter) -> AwaitDemandAction {
        switch phase {
        case .running(let subscriber, let demand, nil):
            if demand > .none {
                phase = .running(subscriber, demand: demand - 1, waiter: nil)
                return .resume(waiter, true)
            }
            phase = .running(subscriber, demand: demand, waiter: waiter)
            return .none
        case .terminated:
            return .resume(waiter, false)
        case .subscribing, .running:
            preconditionFailure("Internal inconsistency: \(phase) received awaitDemand()")
        }
    }

    /// The subscriber to hand the next element to, or nil once the subscription ended.
    func subscriberForEmission() -> Downstream? {
        if case .running(let subscriber, _, _) = phase { return subscriber }
        return nil
    }

    /// The subscriber returned `additional` demand from `receive(_:)`.
    mutating func received(additional: Subscribers.Demand) {
        guard additional > .none, case .running(let subscriber, let demand, let waiter) = phase else { return }
        phase = .running(subscriber, demand: demand + additional, waiter: waiter)
    }

    /// The sequence ended or threw: returns the subscriber to complete, exactly once.
    mutating func finish() -> Downstream? {
        guard case .running(let subscriber, _, _) = phase else { return nil }
        phase = .terminated
        return subscriber
    }

    // MARK: - Cancel

    enum CancelAction {
        case none
        /// Cancel the owned task, wake it if it waits for demand, and let go of the subscriber
        /// outside the lock (its deinit is user code).
        case cancel(Waiter?, released: Downstream)
    }

    /// The subscriber cancelled.
    mutating func cancel() -> CancelAction {
        switch phase {
        case .subscribing(let subscriber, _):
            phase = .terminated
            return .cancel(nil, released: subscriber)
        case .running(let subscriber, _, let waiter):
            phase = .terminated
            return .cancel(waiter, released: subscriber)
        case .terminated:
            return .none
        }
    }
}

#endif
