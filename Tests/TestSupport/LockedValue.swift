import Bridges

/// A value behind a lock, read and written from `@Sendable` closures and other threads; `take()`
/// hands an optional value from one thread to another once.
package final class LockedValue<Value>: Sendable {
    private let state: LockedState<Value>

    package init(_ value: sending Value) { state = LockedState(value) }

    package var value: Value {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }

    /// The value, leaving `nil` in its place.
    package func take<Wrapped>() -> Wrapped? where Value == Wrapped? {
        state.withLock { value in
            defer { value = nil }
            return value
        }
    }
}
