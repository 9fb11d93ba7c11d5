import Dispatch

// The one owned-task core: a Task owned by a token. `subscribe`, `withCompletion`,
// `forEach(weak:)`, `runTask(weak:)`, the Combine publisher's iterating task and the
// `withCallback` timeout are thin adapters over it. It solves, once:
// - the token exists before the Task (it must be handed out, or stored in a bag, first), so the
//   Task is attached afterwards and a cancel that came first is remembered and applied then;
// - the first of cancel and finish wins; the other finds nothing to do;
// - a synchronous handler call is serialised against `cancel()`: once `cancel()` has returned
//   no handler call starts (a call in progress on another thread is waited for), and a
//   `cancel()` made from inside the handler returns at once instead of deadlocking;
// - once the Task is done the token reads as cancelled, so a `CancellationBag` drops it.

/// The events of one owned task: a pure value, no locks, no Task cancelled, nothing resumed.
@usableFromInline
struct OwnedTaskStateMachine {
    @usableFromInline
    enum Phase {
        /// Entered at creation. The Task is nil until `attach`. Left by the first of `cancel`
        /// (→ cancelled) and `finish`/`beginFinish` (→ finished).
        case active(Task<Void, Never>?)
        /// Terminal: `cancel()` came first. No handler call starts any more.
        case cancelled
        /// Terminal: the work or the sequence ended first (its final handler call, if any, is
        /// made by whoever moved the state here).
        case finished
    }

    @usableFromInline var phase: Phase = .active(nil)
    /// The thread running a handler call right now, if any.
    @usableFromInline var handlerThread: UInt?
    /// `cancel()` calls from other threads waiting for the handler call in progress to return.
    @usableFromInline var waiters: [DispatchSemaphore] = []
    /// The Task's body has returned (whether it finished first or was cancelled first).
    @usableFromInline var returned = false
    /// A weak-owner task's lifetime check: watching, after a cancel, for a Task that does not
    /// return (cancelled by `taskReturned()`).
    @usableFromInline var watchdog: Task<Void, Never>?

    @inlinable init() {}

    @inlinable var isActive: Bool {
        if case .active = phase { true } else { false }
    }

    // MARK: - Attach

    @usableFromInline
    enum AttachAction { case keep, cancelTask }

    /// Hands the Task over. `cancelTask` when a cancel came first; a Task that already finished
    /// is not kept (nothing left to cancel).
    @inlinable
    mutating func attach(_ task: Task<Void, Never>) -> AttachAction {
        switch phase {
        case .active(nil):
            phase = .active(task)
            return .keep
        case .cancelled:
            return .cancelTask
        case .finished:
            return .keep
        case .active(.some):
            preconditionFailure("Internal inconsistency: an owned task was attached twice")
        }
    }

    // MARK: - Cancel

    @usableFromInline
    struct CancelAction {
        /// This cancel ended the task (it came before finish).
        @usableFromInline var won = false
        @usableFromInline var task: Task<Void, Never>?
        /// Wait on it (outside the lock) for the handler call in progress on another thread.
        @usableFromInline var wait: DispatchSemaphore?
        @inlinable init() {}
    }

    @inlinable
    mutating func cancel(on thread: UInt) -> CancelAction {
        var action = CancelAction()
        if case .active(let task) = phase {
            phase = .cancelled
            action.won = true
            action.task = task
        }
        if let handlerThread, handlerThread != thread {
            let semaphore = DispatchSemaphore(value: 0)
            waiters.append(semaphore)
            action.wait = semaphore
        }
        return action
    }

    // MARK: - Handler calls

    /// A handler call wants to start. True (and the call is marked in progress) while active.
    @inlinable
    mutating func beginHandlerCall(on thread: UInt) -> Bool {
        guard case .active = phase else { return false }
        precondition(handlerThread == nil, "Internal inconsistency: two handler calls of one owned task at once")
        handlerThread = thread
        return true
    }

    /// The final handler call wants to start: wins (→ finished) only if nobody cancelled first.
    @inlinable
    mutating func beginFinish(on thread: UInt) -> Bool {
        guard case .active = phase else { return false }
        precondition(handlerThread == nil, "Internal inconsistency: two handler calls of one owned task at once")
        phase = .finished
        handlerThread = thread
        return true
    }

    /// The handler call returned: the cancels that waited for it may return too.
    @inlinable
    mutating func endHandlerCall() -> [DispatchSemaphore] {
        handlerThread = nil
        defer { waiters = [] }
        return waiters
    }

    /// The task ended without a final handler call. True if it came before any cancel.
    @inlinable
    mutating func finish() -> Bool {
        guard case .active = phase else { return false }
        phase = .finished
        return true
    }

    // MARK: - Returned and the lifetime watchdog

    /// The Task's body returned. Finishes the task if nobody cancelled it first (`finishedFirst`),
    /// and hands out the watchdog to cancel.
    @inlinable
    mutating func taskReturned() -> (finishedFirst: Bool, watchdog: Task<Void, Never>?) {
        returned = true
        let finishedFirst = finish()
        defer { watchdog = nil }
        return (finishedFirst, watchdog)
    }

    /// Keeps `watchdog` until the Task returns. False if it already returned: cancel it.
    @inlinable
    mutating func watch(_ watchdog: Task<Void, Never>) -> Bool {
        guard !returned else { return false }
        self.watchdog = watchdog
        return true
    }
}
