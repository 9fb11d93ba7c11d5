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
/// - iteration starts only once the subscriber has returned from `receive(subscription:)` and
///   asked for at least one element;
/// - one unit of demand is taken *before* each call to the iterator's `next()`, so the sequence
///   is never asked for an element nobody requested, and iteration pauses at zero demand;
/// - the subscriber is moved out of the state when the subscription ends, so completion is sent
///   at most once and nothing is sent after `cancel()`.
struct AsyncSequenceSubscriptionStateMachine<Downstream> {
    /// A suspended iterating task waiting for demand; resumed with `true` to go on, `false` to stop.
    typealias Waiter = UnsafeContinuation<Bool, Never>

    private enum State {
        /// Entered at creation; the publisher is still inside `subscriber.receive(subscription:)`.
        /// Demand requested meanwhile is kept. Left by `didSubscribe()` (→ `.idle` or `.running`)
        /// or `cancel()` (→ `.terminated`).
        case subscribing(Downstream, demand: Subscribers.Demand)
        /// Subscribed, no demand yet, no task. Left by the first valid `request(_:)` (→ `.running`)
        /// or `cancel()`.
        case idle(Downstream)
        /// The iterating task exists (or is about to: `task` is nil until `taskStarted(_:)`).
        /// `demand` is what was requested and not yet taken by the task; `waiter` is the task
        /// suspended because `demand` was zero. Left by `cancel()` or `finish()`.
        case running(Downstream, demand: Subscribers.Demand, waiter: Waiter?, task: Task<Void, Never>?)
        /// Cancelled or completed. Terminal: every later event is a no-op.
        case terminated
    }

    private var state: State

    init(subscriber: Downstream) {
        state = .subscribing(subscriber, demand: .none)
    }

    // MARK: - Subscription

    enum DidSubscribeAction {
        case none
        case startTask
    }

    /// The publisher returned from `subscriber.receive(subscription:)`.
    mutating func didSubscribe() -> DidSubscribeAction {
        switch state {
        case .subscribing(let subscriber, let demand):
            if demand > .none {
                state = .running(subscriber, demand: demand, waiter: nil, task: nil)
                return .startTask
            }
            state = .idle(subscriber)
            return .none
        case .terminated:
            return .none
        case .idle, .running:
            preconditionFailure("Internal inconsistency: \(state) received didSubscribe()")
        }
    }

    // MARK: - Request

    enum RequestAction {
        case none
        /// `request(.none)`: report and ignore.
        case reportInvalidDemand
        case startTask
        /// Wake the task waiting for demand; one unit was taken on its behalf.
        case resume(Waiter)
    }

    mutating func request(_ demand: Subscribers.Demand) -> RequestAction {
        guard demand > .none else { return .reportInvalidDemand }
        switch state {
        case .subscribing(let subscriber, let pending):
            state = .subscribing(subscriber, demand: pending + demand)
            return .none
        case .idle(let subscriber):
            state = .running(subscriber, demand: demand, waiter: nil, task: nil)
            return .startTask
        case .running(let subscriber, let pending, let waiter, let task):
            guard let waiter else {
                state = .running(subscriber, demand: pending + demand, waiter: nil, task: task)
                return .none
            }
            // The waiting task goes on to call `next()`: it takes one unit of the new demand.
            state = .running(subscriber, demand: pending + demand - 1, waiter: nil, task: task)
            return .resume(waiter)
        case .terminated:
            return .none
        }
    }

    // MARK: - Task

    enum TaskStartedAction {
        case none
        /// The subscription was cancelled before the task handle was stored.
        case cancel(Task<Void, Never>)
    }

    mutating func taskStarted(_ task: Task<Void, Never>) -> TaskStartedAction {
        switch state {
        case .running(let subscriber, let demand, let waiter, nil):
            state = .running(subscriber, demand: demand, waiter: waiter, task: task)
            return .none
        case .terminated:
            return .cancel(task)
        case .subscribing, .idle, .running:
            preconditionFailure("Internal inconsistency: \(state) received taskStarted()")
        }
    }

    enum TakeDemandResult {
        /// One unit of demand was taken: ask the sequence for one element.
        case proceed
        /// Demand is zero: suspend (see ``awaitDemand(_:)``).
        case wait
        /// The subscription ended: stop iterating.
        case stop
    }

    /// The task wants to ask the sequence for one more element.
    mutating func takeDemand() -> TakeDemandResult {
        switch state {
        case .running(let subscriber, let demand, nil, let task):
            guard demand > .none else { return .wait }
            state = .running(subscriber, demand: demand - 1, waiter: nil, task: task)
            return .proceed
        case .terminated:
            return .stop
        case .subscribing, .idle, .running:
            preconditionFailure("Internal inconsistency: \(state) received takeDemand()")
        }
    }

    enum AwaitDemandAction {
        /// The waiter was stored; a later `request(_:)` or `cancel()` resumes it.
        case none
        case resume(Waiter, Bool)
    }

    /// The task found no demand and suspended with `waiter` (demand may have arrived meanwhile).
    mutating func awaitDemand(_ waiter: Waiter) -> AwaitDemandAction {
        switch state {
        case .running(let subscriber, let demand, nil, let task):
            if demand > .none {
                state = .running(subscriber, demand: demand - 1, waiter: nil, task: task)
                return .resume(waiter, true)
            }
            state = .running(subscriber, demand: demand, waiter: waiter, task: task)
            return .none
        case .terminated:
            return .resume(waiter, false)
        case .subscribing, .idle, .running:
            preconditionFailure("Internal inconsistency: \(state) received awaitDemand()")
        }
    }

    /// The subscriber to hand the next element to, or nil once the subscription ended.
    func subscriberForEmission() -> Downstream? {
        if case .running(let subscriber, _, _, _) = state { return subscriber }
        return nil
    }

    /// The subscriber returned `additional` demand from `receive(_:)`.
    mutating func received(additional: Subscribers.Demand) {
        guard additional > .none, case .running(let subscriber, let demand, let waiter, let task) = state else { return }
        state = .running(subscriber, demand: demand + additional, waiter: waiter, task: task)
    }

    /// The sequence ended or threw: returns the subscriber to complete, exactly once.
    mutating func finish() -> Downstream? {
        guard case .running(let subscriber, _, _, _) = state else { return nil }
        state = .terminated
        return subscriber
    }

    // MARK: - Cancel

    enum CancelAction {
        case none
        /// Cancel the task (if it exists and was stored yet), wake it if it waits for demand, and
        /// let go of the subscriber outside the lock (its deinit is user code).
        case cancel(Task<Void, Never>?, Waiter?, released: Downstream)
    }

    /// The subscriber cancelled.
    mutating func cancel() -> CancelAction {
        switch state {
        case .subscribing(let subscriber, _), .idle(let subscriber):
            state = .terminated
            return .cancel(nil, nil, released: subscriber)
        case .running(let subscriber, _, let waiter, let task):
            state = .terminated
            return .cancel(task, waiter, released: subscriber)
        case .terminated:
            return .none
        }
    }
}

#endif
