import Bridges
import Dispatch
import TestSupport
import Testing

/// A legacy API in the shapes Bridges adapts. It keeps the handler until the test decides what
/// to do with it: call it (once, twice), or drop it.
final class LegacyAPI<Handler: Sendable>: Sendable {
    private let handler = LockedState<Handler?>(nil)
    let started = Signal()
    let cancelled = Collected<Void>()
    /// What `stored` returns when no call was started: a handler that does nothing.
    private let standIn: Handler

    /// An API whose handler takes one argument (a `Result`, a value, an optional error).
    init<Argument>() where Handler == @Sendable (Argument) -> Void { standIn = { _ in } }
    /// An API whose handler takes none.
    init() where Handler == @Sendable () -> Void { standIn = {} }

    /// Starts a call: keeps the handler and returns a token that records cancellation.
    func start(_ handler: Handler) -> Cancellation {
        self.handler.withLock { $0 = handler }
        started.open()
        return Cancellation { [cancelled] in cancelled.append(()) }
    }

    /// The stored handler (still stored: call it as many times as the test likes). Read before
    /// any call started (`started.wait()` returned because the test was cancelled, by its time
    /// limit), it records an issue and returns a handler that does nothing, so that the test
    /// fails instead of crashing the run.
    var stored: Handler {
        if let stored = handler.withLock({ $0 }) { return stored }
        Issue.record(
            "LegacyAPI.stored was read before any call started (the test was cancelled, or did not await started.wait())"
        )
        return standIn
    }

    /// Releases the handler without calling it.
    func drop() { handler.withLock { $0 = nil } }
}

/// Captures every diagnostic reported by bridges created inside `body`.
func capturingDiagnostics<R>(_ body: () async throws -> R) async rethrows -> (R, [BridgeDiagnostic]) {
    let diagnostics = Collected<BridgeDiagnostic>()
    let result = try await Diagnostics.withHandler({ diagnostics.append($0) }, operation: body)
    return (result, diagnostics.values)
}

func failToStart(code: Int) throws { throw TestError(code: code) }
