import Bridges
import Dispatch

/// A one-shot signal: `open()` from anywhere, `await wait()` until it is open. No sleeping.
final class Signal: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func open() {
        continuation.yield()
        continuation.finish()
    }

    /// Returns once `open()` was called, or when the waiting task is cancelled. The signal is
    /// kept alive until then: a released signal would end its stream, and a waiter whose signal
    /// nobody else holds (`await Signal().wait()`, "sleep until cancelled") would return early.
    func wait() async {
        defer { withExtendedLifetime(self) {} }
        for await _ in stream { return }
    }
}

/// Lives as long as whatever captures it; lets a test check that it was released.
final class Canary: Sendable {
    let released: Signal?
    init(released: Signal? = nil) { self.released = released }
    deinit { released?.open() }
}

/// A weak reference that can be filled in from a `@Sendable` closure.
// `object` is only written before it is read, across an await
final class Weak<Object: AnyObject>: @unchecked Sendable {
    weak var object: Object?
    init(_ object: Object? = nil) { self.object = object }
}

/// Work that only ends by cancellation: suspends until the current task is cancelled, then
/// throws `CancellationError`. (What a one-hour `Task.sleep` would do, without real time.)
func suspendUntilCancelled() async throws {
    let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
    await withTaskCancellationHandler {
        for await _ in stream {}
    } onCancel: {
        continuation.finish()
    }
    throw CancellationError()
}
