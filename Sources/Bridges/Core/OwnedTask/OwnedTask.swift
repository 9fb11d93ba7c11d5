#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Bionic)
import Bionic
#endif
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
    @usableFromInline var deliveringThread: UInt?
    /// `cancel()` calls from other threads waiting for the handler call in progress to return.
    @usableFromInline var waiters: [DispatchSemaphore] = []

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
        if let deliveringThread, deliveringThread != thread {
            let semaphore = DispatchSemaphore(value: 0)
            waiters.append(semaphore)
            action.wait = semaphore
        }
        return action
    }

    // MARK: - Handler calls

    /// A handler call wants to start. True (and the call is marked in progress) while active.
    @inlinable
    mutating func beginDelivery(on thread: UInt) -> Bool {
        guard case .active = phase else { return false }
        precondition(deliveringThread == nil, "Internal inconsistency: two handler calls of one owned task at once")
        deliveringThread = thread
        return true
    }

    /// The final handler call wants to start: wins (→ finished) only if nobody cancelled first.
    @inlinable
    mutating func beginFinish(on thread: UInt) -> Bool {
        guard case .active = phase else { return false }
        precondition(deliveringThread == nil, "Internal inconsistency: two handler calls of one owned task at once")
        phase = .finished
        deliveringThread = thread
        return true
    }

    /// The handler call returned: the cancels that waited for it may return too.
    @inlinable
    mutating func endDelivery() -> [DispatchSemaphore] {
        deliveringThread = nil
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
}

/// An identifier for the calling thread, to recognise a `cancel()` made from inside a handler.
@inlinable
func _currentThreadID() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
}

/// A Task owned by a token: lock + ``OwnedTaskStateMachine`` + acting on its actions.
///
/// Handler calls go through ``deliver(_:)`` / ``finish(_:)``; they are made with no lock held.
/// ``cancel()`` may block while a handler call runs on another thread (so that none starts
/// after it returns); a handler that waits synchronously for a thread that is calling
/// `cancel()` on the same subscription would deadlock, as with `DispatchQueue.sync`.
@usableFromInline
package final class OwnedTask: Sendable {
    @usableFromInline let state = LockedState<OwnedTaskStateMachine>(OwnedTaskStateMachine())

    @inlinable package init() {}

    /// Hands over the Task; cancels it at once if `cancel()` came first.
    @inlinable
    package func attach(_ task: Task<Void, Never>) {
        if case .cancelTask = state.withLock({ $0.attach(task) }) { task.cancel() }
    }

    /// Ends the owned task if it is still running: cancels the Task, and returns once no handler
    /// call is in progress on another thread. Returns whether this call came before the finish.
    @inlinable
    @discardableResult
    package func cancel() -> Bool {
        let action = state.withLock { $0.cancel(on: _currentThreadID()) }
        action.task?.cancel()
        action.wait?.wait()
        return action.won
    }

    /// Whether neither `cancel()` nor the finish happened yet.
    @inlinable package var isActive: Bool { state.withLock { $0.isActive } }

    /// Calls `handler` now unless the task was cancelled (or finished); returns whether it did.
    /// `cancel()` from another thread waits until the call returns.
    @inlinable
    package func deliver(_ handler: () -> Void) -> Bool {
        guard state.withLock({ $0.beginDelivery(on: _currentThreadID()) }) else { return false }
        handler()
        for waiter in state.withLock({ $0.endDelivery() }) { waiter.signal() }
        return true
    }

    /// The final call: if nobody cancelled first, moves to finished and calls `handler`
    /// (serialised against `cancel()` like ``deliver(_:)``). Returns whether it did.
    @inlinable
    @discardableResult
    package func finish(_ handler: () -> Void) -> Bool {
        guard state.withLock({ $0.beginFinish(on: _currentThreadID()) }) else { return false }
        handler()
        for waiter in state.withLock({ $0.endDelivery() }) { waiter.signal() }
        return true
    }

    /// The task ended without a final call. Returns whether it came before any cancel.
    @inlinable
    @discardableResult
    package func finish() -> Bool { state.withLock { $0.finish() } }
}
