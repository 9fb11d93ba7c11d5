import Bridges

/// A thread-safe list of values, for recording what callbacks received; `wait(count:)` returns
/// once that many were appended.
package final class Collected<Value: Sendable>: Sendable {
    private struct State {
        var values: [Value] = []
        var waiters: [(count: Int, continuation: UnsafeContinuation<Void, Never>)] = []
    }

    private let state = LockedState(State())

    package init() {}

    package func append(_ value: Value) {
        let ready = state.withLock { state -> [UnsafeContinuation<Void, Never>] in
            state.values.append(value)
            guard !state.waiters.isEmpty else { return [] }
            let count = state.values.count
            let ready = state.waiters.filter { $0.count <= count }.map(\.continuation)
            state.waiters.removeAll { $0.count <= count }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    package var values: [Value] { state.withLock { $0.values } }
    package var count: Int { state.withLock { $0.values.count } }

    /// Returns once `count` values have been appended (at once if they already were).
    package func wait(count: Int) async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.values.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}
