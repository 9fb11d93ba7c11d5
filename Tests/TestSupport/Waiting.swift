import Bridges

/// Lets a test suspend until a condition over some recorded state holds, without sleeping:
/// whoever changes the state calls ``changed()``, which re-checks every waiting condition.
package final class Waiters: Sendable {
    private struct Waiter {
        let condition: @Sendable () -> Bool
        let continuation: UnsafeContinuation<Void, Never>
    }

    private let waiters = LockedState<[Int: Waiter]>([:])
    private let nextID = LockedState(0)

    package init() {}

    /// Suspends until `condition` holds. Conditions are evaluated outside this lock.
    package func wait(until condition: @escaping @Sendable () -> Bool) async {
        if condition() { return }
        let id = nextID.withLock { id in
            defer { id += 1 }
            return id
        }
        await withUnsafeContinuation { continuation in
            waiters.withLock { $0[id] = Waiter(condition: condition, continuation: continuation) }
            changed()
        }
    }

    package func changed() {
        for (id, waiter) in waiters.withLock({ $0 }) where waiter.condition() {
            if waiters.withLock({ $0.removeValue(forKey: id) }) != nil { waiter.continuation.resume() }
        }
    }
}

/// A one-shot gate: `wait()` returns once `open()` has been called (before or after). A waiter
/// stays until the gate opens, whether or not its task is cancelled.
package final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [UnsafeContinuation<Void, Never>] = []
    }

    private let state = LockedState<State>(State())

    package init() {}

    package func open() {
        let waiters = state.withLock { state -> [UnsafeContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    package var isOpen: Bool { state.withLock { $0.isOpen } }

    package func wait() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.isOpen { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}

/// A thread-safe counter that tests can wait on.
package final class Counter: Sendable {
    private let count = LockedState(0)
    private let waiters = Waiters()

    package init() {}

    @discardableResult
    package func increment() -> Int {
        defer { waiters.changed() }
        return count.withLock {
            $0 += 1
            return $0
        }
    }

    package var value: Int { count.withLock { $0 } }

    package func wait(untilAtLeast target: Int) async {
        await waiters.wait { [count] in count.withLock { $0 >= target } }
    }
}
