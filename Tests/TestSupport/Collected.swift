import Bridges

/// A thread-safe list of values, for recording what callbacks received.
package final class Collected<Value: Sendable>: Sendable {
    private let state = LockedState<[Value]>([])

    package init() {}

    package func append(_ value: Value) { state.withLock { $0.append(value) } }
    package var values: [Value] { state.withLock { $0 } }
    package var count: Int { state.withLock { $0.count } }
}
