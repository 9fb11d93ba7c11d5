import Dispatch

/// A thread-safe append-only log for tests.
final class Log<Value: Sendable>: Sendable {
    private let lock = DispatchSemaphore(value: 1)
    nonisolated(unsafe) private var storage: [Value] = []  // guarded by `lock`

    func append(_ value: Value) {
        lock.wait()
        storage.append(value)
        lock.signal()
    }
    var values: [Value] {
        lock.wait()
        defer { lock.signal() }
        return storage
    }
}
