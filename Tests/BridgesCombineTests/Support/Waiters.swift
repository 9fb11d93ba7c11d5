import Bridges

@testable import BridgesCombine

/// Lets a test suspend until a condition over some recorded state holds, without sleeping:
/// whoever changes the state calls ``changed()``, which re-checks every waiting condition.
final class Waiters: Sendable {
    private struct Waiter {
        let condition: @Sendable () -> Bool
        let continuation: UnsafeContinuation<Void, Never>
    }

    private let waiters = LockedState<[Int: Waiter]>([:])
    private let nextID = LockedState(0)

    /// Suspends until `condition` holds. Conditions are evaluated outside this lock.
    func wait(until condition: @escaping @Sendable () -> Bool) async {
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

    func changed() {
        for (id, waiter) in waiters.withLock({ $0 }) where waiter.condition() {
            if waiters.withLock({ $0.removeValue(forKey: id) }) != nil { waiter.continuation.resume() }
        }
    }
}

/// A one-shot gate: `wait()` suspends until `open()` has been called (before or after).
final class Gate: Sendable {
    private let isOpen = LockedState(false)
    private let waiters = Waiters()

    func open() {
        isOpen.withLock { $0 = true }
        waiters.changed()
    }

    var opened: Bool { isOpen.withLock { $0 } }

    func wait() async {
        await waiters.wait { [isOpen] in isOpen.withLock { $0 } }
    }
}

/// A thread-safe counter that tests can wait on.
final class Counter: Sendable {
    private let count = LockedState(0)
    private let waiters = Waiters()

    @discardableResult
    func increment() -> Int {
        defer { waiters.changed() }
        return count.withLock {
            $0 += 1
            return $0
        }
    }

    var value: Int { count.withLock { $0 } }

    func wait(untilAtLeast target: Int) async {
        await waiters.wait { [count] in count.withLock { $0 >= target } }
    }
}

/// Collects diagnostics reported while a test runs.
final class DiagnosticLog: Sendable {
    private let entries = LockedState<[BridgeDiagnostic]>([])
    var handler: Diagnostics.Handler { { [entries] d in entries.withLock { $0.append(d) } } }
    var kinds: [BridgeDiagnostic.Kind] { entries.withLock { $0.map(\.kind) } }
    var all: [BridgeDiagnostic] { entries.withLock { $0 } }
}
