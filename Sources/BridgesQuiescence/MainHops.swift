import Bridges
import Dispatch

/// Counts jobs of tasks that left the main actor and have not finished their step yet.
package final class MainHops: Sendable {
    private struct State {
        var inFlight = 0
        var done = 0
        var waiters: [OneShot<Bool>] = []
    }

    private let state = LockedState(State())

    /// How many such jobs have finished so far.
    package var done: Int { state.withLock { $0.done } }

    package func begin() {
        state.withLock { $0.inFlight += 1 }
    }

    package func end() {
        let waiters = state.withLock { state -> [OneShot<Bool>] in
            state.inFlight -= 1
            state.done += 1
            guard state.inFlight == 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(true) }
    }

    /// Waits until no such job is in flight, or until `deadline` (then returns false).
    package func waitUntilNoneInFlight(deadline: DispatchTime) async -> Bool {
        if state.withLock({ $0.inFlight == 0 }) { return true }
        return await withUnsafeContinuation { (continuation: UnsafeContinuation<Bool, Never>) in
            let waiter = OneShot(continuation)
            let idle = state.withLock { state -> Bool in
                if state.inFlight == 0 { return true }
                state.waiters.append(waiter)
                return false
            }
            if idle {
                DispatchQueue.global().async { waiter.resume(true) }
            } else {
                DispatchQueue.global().asyncAfter(deadline: deadline) { waiter.resume(false) }
            }
        }
    }
}
