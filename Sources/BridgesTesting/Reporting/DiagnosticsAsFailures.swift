import Testing

extension Diagnostics {
    /// A handler that records every diagnostic as a failure of the running test, at the call
    /// site of the bridge that was misused (its `#fileID` and `#line`).
    ///
    /// Install it for a whole test process with `Diagnostics.defaultHandler = Diagnostics.failTests`,
    /// or for one test with ``withBridgesDiagnosticsAsFailures(isolation:_:)``, which
    /// also attributes misuse reported from other threads to the right test.
    public static let failTests: Handler = { diagnostic in
        _reportTestFailure(diagnostic.description, fileID: diagnostic.fileID, line: diagnostic.line)
    }
}

/// Runs `operation` so that misuse of any bridge created inside it fails the test, at the
/// bridge's call site: a completion handler called twice, a dropped callback, a yield after
/// finish.
///
/// <!-- snippet: file -->
/// ```swift
/// @Test func loadsOnce() async throws {
///     let client = FakeCompletionAPI<Int, User>()
///     try await withBridgesDiagnosticsAsFailures {
///         async let user = withCallback { done in client.call(42, completion: done) }
///         try await client.nextInvocation().complete(with: User(id: 42, name: "Ada"))
///         #expect(try await user.id == 42)
///     }   // a client that calls back twice fails this test at the withCallback line
/// }
/// ```
///
/// Misuse reported on the test's own task is recorded at once. Misuse reported from another
/// thread (a legacy API calling back on its queue) is recorded on the test's task when
/// `operation` returns, so the failure belongs to this test even while others run in parallel.
/// Misuse reported after that is recorded where it happens, like `Diagnostics.failTests`.
public func withBridgesDiagnosticsAsFailures<R>(
    isolation: isolated (any Actor)? = #isolation,
    _ operation: () async throws -> R
) async rethrows -> R {
    let collector = DiagnosticsCollector()
    defer { collector.flush() }
    return try await Diagnostics.withHandler(collector.handle, isolation: isolation, operation: operation)
}

/// Synchronous form of ``withBridgesDiagnosticsAsFailures(isolation:_:)``.
public func withBridgesDiagnosticsAsFailures<R>(
    _ operation: () throws -> R
) rethrows -> R {
    let collector = DiagnosticsCollector()
    defer { collector.flush() }
    return try Diagnostics.withHandler(collector.handle, operation: operation)
}

/// Records diagnostics on the test's own task; holds those reported elsewhere until `flush()`.
final class DiagnosticsCollector: Sendable {
    private struct State {
        var held: [BridgeDiagnostic] = []
        var isOpen = true
    }

    private let test: Test.ID?
    private let state = LockedState(State())

    init() {
        XCTestFailureRecorder.start()
        test = Test.current?.id
    }

    var handle: Diagnostics.Handler {
        { [self] diagnostic in
            let onTestTask = test == nil || Test.current?.id == test
            let hold =
                !onTestTask
                && state.withLock { state in
                    if state.isOpen { state.held.append(diagnostic) }
                    return state.isOpen
                }
            if !hold { Diagnostics.failTests(diagnostic) }
        }
    }

    func flush() {
        let held = state.withLock { state in
            state.isOpen = false
            defer { state.held = [] }
            return state.held
        }
        for diagnostic in held { Diagnostics.failTests(diagnostic) }
    }
}
