import Bridges

/// Runs `operation` and expects the bridges created inside it to report exactly `expected`
/// (in any order): a test of intended misuse that passes without recording a known issue.
///
/// Before: the misuse fails the test on purpose, and `withKnownIssue` swallows it, so every such
/// test adds to the run's "N known issues" line:
/// <!-- snippet: test -->
/// ```swift
/// let api = FakeCompletionAPI<Void, Int>()
/// await withKnownIssue {
///     try await withBridgesDiagnosticsAsFailures {
///         async let value = withCallback { done in api.call(completion: done) }
///         try await api.nextInvocation().callTwice(with: 1)
///         _ = try await value
///     }
/// }
/// ```
/// After: the diagnostic is the expectation; a missing, extra or different one fails the test
/// at this call's line, naming what was reported:
/// <!-- snippet: test -->
/// ```swift
/// let api = FakeCompletionAPI<Void, Int>()
/// let value = try await expectDiagnostics([.callbackCalledTwice]) {
///     async let value = withCallback { done in api.call(completion: done) }
///     try await api.nextInvocation().callTwice(with: 1)
///     return try await value
/// }
/// ```
///
/// Diagnostics are collected through a task-local handler (`Diagnostics.withHandler(_:isolation:operation:)`),
/// so bridges created inside `operation` report here even from other threads, and tests running in
/// parallel do not see each other's. Only what is reported before `operation` returns is counted:
/// wait inside it for the legacy work that triggers the misuse (a recorder, `nextInvocation()`,
/// `runUntilIdle()`). Use `withKnownIssue` only to test that something *fails* a test.
@discardableResult
public func expectDiagnostics<R>(
    _ expected: [BridgeDiagnostic.Kind],
    isolation: isolated (any Actor)? = #isolation,
    fileID: String = #fileID,
    filePath: String = #filePath,
    line: UInt = #line,
    column: UInt = #column,
    _ operation: () async throws -> R
) async rethrows -> R {
    let reported = LockedState<[BridgeDiagnostic]>([])
    let result = try await Diagnostics.withHandler(
        { diagnostic in reported.withLock { $0.append(diagnostic) } }, isolation: isolation, operation: operation
    )
    let diagnostics = reported.withLock { $0 }
    if let mismatch = _diagnosticsMismatch(expected: expected, reported: diagnostics) {
        _reportTestFailure(mismatch, fileID: fileID, filePath: filePath, line: line, column: column)
    }
    return result
}

/// Synchronous form of ``expectDiagnostics(_:isolation:fileID:filePath:line:column:_:)``.
@discardableResult
public func expectDiagnostics<R>(
    _ expected: [BridgeDiagnostic.Kind],
    fileID: String = #fileID,
    filePath: String = #filePath,
    line: UInt = #line,
    column: UInt = #column,
    _ operation: () throws -> R
) rethrows -> R {
    let reported = LockedState<[BridgeDiagnostic]>([])
    let result = try Diagnostics.withHandler(
        { diagnostic in reported.withLock { $0.append(diagnostic) } }, operation: operation)
    let diagnostics = reported.withLock { $0 }
    if let mismatch = _diagnosticsMismatch(expected: expected, reported: diagnostics) {
        _reportTestFailure(mismatch, fileID: fileID, filePath: filePath, line: line, column: column)
    }
    return result
}

/// `nil` if `reported` holds exactly the kinds of `expected`, as a multiset; otherwise the failure message.
func _diagnosticsMismatch(expected: [BridgeDiagnostic.Kind], reported: [BridgeDiagnostic]) -> String? {
    var missing = expected
    var unexpected: [BridgeDiagnostic] = []
    for diagnostic in reported {
        if let index = missing.firstIndex(of: diagnostic.kind) {
            missing.remove(at: index)
        } else {
            unexpected.append(diagnostic)
        }
    }
    if missing.isEmpty && unexpected.isEmpty { return nil }
    var message = "expected diagnostics \(expected), reported \(reported.map(\.kind))"
    if !missing.isEmpty { message += "; missing \(missing)" }
    if !unexpected.isEmpty { message += "; unexpected: " + unexpected.map(\.description).joined(separator: "; ") }
    return message
}
