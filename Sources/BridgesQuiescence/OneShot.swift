import Bridges

/// A continuation that the first of several racing resumers resumes; the others find nothing.
package final class OneShot<T: Sendable>: Sendable {
    private let continuation: LockedState<UnsafeContinuation<T, Never>?>

    package init(_ continuation: UnsafeContinuation<T, Never>) { self.continuation = LockedState(continuation) }

    package func resume(_ value: T) {
        let taken = continuation.withLock { continuation -> UnsafeContinuation<T, Never>? in
            defer { continuation = nil }
            return continuation
        }
        taken?.resume(returning: value)
    }
}
