import Bridges
import TestSupport

@testable import BridgesCombine

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine

/// A subscriber for demand-compliance tests (in the spirit of the Reactive Streams TCK): it
/// records everything it receives, counts how many elements arrived beyond what it requested,
/// and lets the test request, cancel and wait.
final class RecordingSubscriber<Input: Sendable, Failure: Error>: Subscriber, @unchecked Sendable {
    // @unchecked: every stored var is in `state`, behind its lock.

    struct State {
        var subscription: (any Subscription)?
        var subscriptionCount = 0
        var inputs: [Input] = []
        var completions: [Subscribers.Completion<Failure>] = []
        /// Requested minus received, as the subscriber sees it.
        var outstanding: Subscribers.Demand = .none
        /// Elements received when `outstanding` was zero.
        var excess = 0
        var cancelled = false
        /// Elements received after `cancel()` had returned.
        var afterCancel = 0
    }

    let state = LockedState(State())
    private let waiters = Waiters()
    private let initialDemand: Subscribers.Demand
    /// Demand returned from `receive(_:)` for each element (default none).
    private let onInput: @Sendable (Input, RecordingSubscriber) -> Subscribers.Demand
    let deinitGate: Gate?

    init(
        initialDemand: Subscribers.Demand = .none,
        deinitGate: Gate? = nil,
        onInput: @escaping @Sendable (Input, RecordingSubscriber) -> Subscribers.Demand = { _, _ in .none }
    ) {
        self.initialDemand = initialDemand
        self.deinitGate = deinitGate
        self.onInput = onInput
    }

    deinit { deinitGate?.open() }

    var inputs: [Input] { state.withLock { $0.inputs } }
    var completions: [Subscribers.Completion<Failure>] { state.withLock { $0.completions } }
    var excess: Int { state.withLock { $0.excess } }
    var afterCancel: Int { state.withLock { $0.afterCancel } }

    func receive(subscription: any Subscription) {
        state.withLock {
            $0.subscriptionCount += 1
            $0.subscription = subscription
        }
        if initialDemand > .none { request(initialDemand) }
        waiters.changed()
    }

    func receive(_ input: Input) -> Subscribers.Demand {
        state.withLock { state in
            if state.cancelled { state.afterCancel += 1 }
            if state.outstanding > .none { state.outstanding -= 1 } else { state.excess += 1 }
            state.inputs.append(input)
        }
        let more = onInput(input, self)
        state.withLock { $0.outstanding += more }
        waiters.changed()
        return more
    }

    func receive(completion: Subscribers.Completion<Failure>) {
        state.withLock {
            $0.completions.append(completion)
            $0.subscription = nil
        }
        waiters.changed()
    }

    func request(_ demand: Subscribers.Demand) {
        let subscription = state.withLock { state -> (any Subscription)? in
            state.outstanding += demand
            return state.subscription
        }
        subscription?.request(demand)
    }

    /// Cancels and lets go of the subscription (which breaks the subscriber ⇄ subscription cycle).
    func cancel() {
        let subscription = state.withLock { $0.subscription.take() }
        subscription?.cancel()
        state.withLock { $0.cancelled = true }
    }

    func wait(forInputs count: Int) async {
        await waiters.wait { [state] in state.withLock { $0.inputs.count >= count } }
    }

    func waitForCompletion() async {
        await waiters.wait { [state] in state.withLock { !$0.completions.isEmpty } }
    }

    func waitForSubscription() async {
        await waiters.wait { [state] in state.withLock { $0.subscriptionCount > 0 } }
    }
}

extension Optional {
    mutating func take() -> Wrapped? {
        defer { self = nil }
        return self
    }
}

extension Subscribers.Completion {
    var isFinished: Bool { if case .finished = self { true } else { false } }
}

#endif
