import Dispatch

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Bionic)
import Bionic
#endif

// The owned-task core's storage; its state machine and what it solves: OwnedTaskStateMachine.swift.

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
/// Handler calls go through ``callHandler(_:)`` / ``finish(_:)``; they are made with no lock held.
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
    package func callHandler(_ handler: () -> Void) -> Bool {
        guard state.withLock({ $0.beginHandlerCall(on: _currentThreadID()) }) else { return false }
        handler()
        for waiter in state.withLock({ $0.endHandlerCall() }) { waiter.signal() }
        return true
    }

    /// The final call: if nobody cancelled first, moves to finished and calls `handler`
    /// (serialised against `cancel()` like ``callHandler(_:)``). Returns whether it did.
    @inlinable
    @discardableResult
    package func finish(_ handler: () -> Void) -> Bool {
        guard state.withLock({ $0.beginFinish(on: _currentThreadID()) }) else { return false }
        handler()
        for waiter in state.withLock({ $0.endHandlerCall() }) { waiter.signal() }
        return true
    }

    /// The task ended without a final call. Returns whether it came before any cancel.
    @inlinable
    @discardableResult
    package func finish() -> Bool { state.withLock { $0.finish() } }

    /// The Task's body returned: finishes (as ``finish()``) and cancels the lifetime watchdog,
    /// if one was set. Returns whether it came before any cancel.
    @inlinable
    @discardableResult
    package func taskReturned() -> Bool {
        let (finishedFirst, watchdog) = state.withLock { $0.taskReturned() }
        watchdog?.cancel()
        return finishedFirst
    }

    /// Whether the Task's body has returned.
    @inlinable package var hasReturned: Bool { state.withLock { $0.returned } }

    /// Keeps `watchdog` (a weak-owner task's lifetime check) until the Task returns, which
    /// cancels it; cancels it now if the Task already returned.
    @inlinable
    package func watch(_ watchdog: Task<Void, Never>) {
        if !state.withLock({ $0.watch(watchdog) }) { watchdog.cancel() }
    }
}
