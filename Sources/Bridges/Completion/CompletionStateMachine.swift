/// The state of one `withCompletion` bridge: who gets to call the completion handler.
///
/// Two events race: the work finishing (with a value or an error) and the caller cancelling.
/// The first one takes the completion handler out of the state; the second finds nothing. That is
/// what makes "called exactly once" structural rather than a flag someone must remember to check.
@usableFromInline
struct CompletionStateMachine<Success> {
    @usableFromInline typealias Completion = @Sendable (Result<Success, any Error>) -> Void

    @usableFromInline
    enum State {
        /// Entered at creation. Left by the first of `finish` (→ finished) and `cancel` (→ cancelled).
        case running(Completion)
        /// Terminal: the work finished first and its result went to the completion handler.
        case finished
        /// Terminal: `cancel()` came first; the work's eventual result is discarded.
        case cancelled
    }

    @usableFromInline var state: State

    @inlinable
    init(_ completion: @escaping Completion) { state = .running(completion) }

    /// The work returned or threw. Returns the handler to call with its result, or nil when
    /// cancellation already ended the bridge.
    @inlinable
    mutating func finish() -> Completion? {
        switch state {
        case .running(let completion):
            state = .finished
            return completion
        case .cancelled:
            return nil
        case .finished:
            preconditionFailure("Internal inconsistency: withCompletion's work finished twice")
        }
    }

    /// The caller cancelled. Returns the handler (to call with `CancellationError`, or just to
    /// release outside the lock), or nil when the work already finished or cancel ran before.
    @inlinable
    mutating func cancel() -> Completion? {
        guard case .running(let completion) = state else { return nil }
        state = .cancelled
        return completion
    }
}

@usableFromInline
typealias CompletionStorage<Success> = LockedState<CompletionStateMachine<Success>>

extension LockedState {
    /// Takes the handler if the work won the race. Nothing is called under the lock.
    @inlinable
    func _finish<S>() -> CompletionStateMachine<S>.Completion? where State == CompletionStateMachine<S> {
        withLock { $0.finish() }
    }

    @inlinable
    func _cancel<S>() -> CompletionStateMachine<S>.Completion? where State == CompletionStateMachine<S> {
        withLock { $0.cancel() }
    }
}
