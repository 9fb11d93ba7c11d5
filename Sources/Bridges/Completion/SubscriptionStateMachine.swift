/// The state of one `subscribe` subscription: whether it may still deliver, and who ends it.
///
/// The iterating task asks before every delivery; `cancel()` and the end of the sequence race
/// for the terminal state, and only the sequence's end (if it wins) calls `onFinish`.
@usableFromInline
struct SubscriptionStateMachine: Sendable {
    @usableFromInline
    enum State: Sendable {
        /// Entered at creation. Left by `cancel` (→ cancelled) or `finish` (→ finished).
        case active
        /// Terminal: the token was cancelled. No element and no `onFinish` is delivered any more.
        case cancelled
        /// Terminal: the sequence ended (returned nil or threw) before any cancel.
        case finished
    }

    @usableFromInline var state: State = .active

    @inlinable init() {}

    /// Whether an element may still be handed to `onElement`.
    @inlinable var isActive: Bool {
        if case .active = state { true } else { false }
    }

    /// The token was cancelled. Returns false if the subscription had already ended.
    @inlinable
    mutating func cancel() -> Bool {
        guard case .active = state else { return false }
        state = .cancelled
        return true
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
