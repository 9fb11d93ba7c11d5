// Reports a failure to whichever test framework is running the current test.
//
// Swift Testing when `Test.current` is set (the reporting task belongs to a `@Test`), XCTest
// otherwise: on the running `XCTestCase` at the exact file and line when BridgesTesting has
// seen that test case start, else through `XCTFail` with the location in the message. Neither
// framework's types appear in BridgesTesting's public API. Outside any test the failure is
// printed, so a misused helper is never silent. Both frameworks are imported unconditionally:
// BridgesTesting is linked into test targets only, which are built at those frameworks' floors.
import Testing
import XCTest

/// Records `message` as a failure of the running test, at `fileID`:`line`.
///
/// Call it from helpers of your own that should fail a test the way BridgesTesting's
/// expectations do. Under Swift Testing the issue is attributed to the test whose task calls
/// this; from a thread that belongs to no test, prefer ``withBridgesDiagnosticsAsFailures(isolation:_:)``,
/// which collects such reports and records them on the test's own task.
public func recordTestFailure(
    _ message: String,
    fileID: String = #fileID,
    filePath: String = #filePath,
    line: UInt = #line,
    column: UInt = #column
) {
    _reportTestFailure(message, fileID: fileID, filePath: filePath, line: line, column: column)
}

func _reportTestFailure(
    _ message: String,
    fileID: String,
    filePath: String? = nil,
    line: UInt,
    column: UInt = 1
) {
    if Test.current != nil {
        Issue.record(
            Comment(rawValue: message),
            sourceLocation: SourceLocation(
                fileID: fileID, filePath: filePath ?? fileID, line: Int(line), column: Int(column)
            )
        )
    } else if XCTestFailureRecorder.isRunningXCTest {
        XCTestFailureRecorder.record(message, file: filePath ?? fileID, line: line)
    } else {
        // XCTest's current test case is not known (the observer was registered after it
        // started), or no test runs at all: XCTFail records on the running XCTestCase, from any
        // thread, and does nothing outside one. It only takes a StaticString file, so the
        // location goes into the message; it is also printed, so nothing is ever silent.
        let located = "\(fileID):\(line): \(message)"
        XCTFail(located)
        print("\(located)")
    }
}
