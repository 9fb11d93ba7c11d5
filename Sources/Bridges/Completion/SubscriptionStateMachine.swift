/// The state of one `subscribe` subscription: whether it may still deliver, who ends it, and
/// the Task that iterates.
///
/// The iterating task asks before every delivery; `cancel()` and the end of the sequence race
/// for the terminal state, and only the sequence's end (if it wins) calls `onFinish`. The Task
/// is moved out by whichever ends the subscription, so a finished subscription kept in a bag
/// holds neither the Task nor the handlers it captured.
@usableFromInline
struct SubscriptionStateMachine: Sendable {
    @usableFromInline
    enum State: Sendable {
        /// Entered at creation (the Task is attached just after). Left by `cancel` or `finish`.
        case active(Task<Void, Never>?)
        /// Terminal: the token was cancelled. No element and no `onFinish` is delivered any more.
        case cancelled
        /// Terminal: the sequence ended (returned nil or threw) before any cancel.
        case finished
    }

    @usableFromInline var state: State = .active(nil)

    @inlinable init() {}

    /// Whether an element may still be handed to `onElement`.
    @inlinable var isActive: Bool {
        if case .active = state { true } else { false }
    }

    /// Keeps the Task so that `cancel` can reach it. Returns false when the subscription was
    /// cancelled meanwhile (cancel the Task now) or already finished (nothing to keep).
    @inlinable
    mutating func attach(_ task: Task<Void, Never>) -> Bool {
        guard case .active = state else { return false }
        state = .active(task)
        return true
    }

    /// The token was cancelled. Returns the Task to cancel, or nil if it ended already (or is
    /// not attached yet: `attach` then reports the cancel).
    @inlinable
    mutating func cancel() -> Task<Void, Never>? {
        guard case .active(let task) = state else { return nil }
        state = .cancelled
        return task
    }

    /// The sequence ended. Returns true when `onFinish` must be called (nobody cancelled first).
    @inlinable
    mutating func finish() -> Bool {
        switch state {
        case .active:
            state = .finished
            return true
        case .cancelled:
            return false
        case .finished:
            preconditionFailure("Internal inconsistency: a subscription's sequence finished twice")
        }
    }
}
