// BridgesTesting's clocks, fakes, channel, recorder, leak tracker and quiescence, built a second
// time without XCTest or Swift Testing, for the executables (the tour and the examples) and the
// tests of the examples.
//
// An executable must not link BridgesTesting: BridgesTesting imports XCTest and Testing, and on
// macOS SwiftPM sets up those frameworks' paths for the test runner only, so an executable that
// links them does not load (`swift run` fails at launch). The folders here are symbolic links
// to BridgesTesting's own: one source, two modules. Only the reporting differs: a failure is
// printed, as BridgesTesting does outside any test. The scheduler behind `withSerialTasks`
// (BridgesQuiescence) is one module for both, so a process that links both (the package's test
// bundle) has one owner of the runtime's enqueue hook.
@_exported import Bridges

/// Where a helper's failure goes besides the printed line: the tests of the examples set it (to
/// `Issue.record`), since this module cannot import a test framework.
package let exampleTestingFailureHook = LockedState<ExampleTestingFailureHook?>(nil)

/// A struct, not the bare function: a function that is a `LockedState`'s whole value is wrapped
/// in two more reabstraction thunks by every `withLock { $0 }` of a debug build.
package struct ExampleTestingFailureHook: Sendable {
    package let record: @Sendable (_ message: String, _ fileID: String, _ line: UInt) -> Void
    package init(_ record: @escaping @Sendable (_ message: String, _ fileID: String, _ line: UInt) -> Void) {
        self.record = record
    }
}

/// Prints a helper's failure (a fake not cancelled in time, a recorder's unmet expectation) as
/// a compiler-style line, and hands it to `exampleTestingFailureHook` when one is set.
func _reportTestFailure(
    _ message: String,
    fileID: String,
    filePath: String? = nil,
    line: UInt,
    column: UInt = 1
) {
    print("\(filePath ?? fileID):\(line):\(column): error: \(message)")
    exampleTestingFailureHook.withLock { $0 }?.record(message, fileID, line)
}

/// BridgesTesting's observer of XCTest's test cases; with no XCTest there is nothing to observe.
enum XCTestFailureRecorder {
    static func start() {}
}

/// BridgesTesting tells the scheduler which Swift Testing test a task belongs to; without a test
/// framework there is no test to tell.
enum TestIdentity {
    static func install() {}
}
