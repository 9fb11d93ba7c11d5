// Records failures on the running XCTestCase with the caller's file and line as Strings.
//
// `XCTFail` only takes a `StaticString` file, and a bridge's call site is a runtime `String`
// (`#fileID` captured when the bridge was created), so this observes test cases as they start
// and finish and records an issue on the current one: `record(_:)` with an `XCTIssue` on Apple
// platforms (where `recordFailure(withDescription:…)` is unavailable to Swift), and
// `recordFailure(withDescription:inFile:atLine:expected:)` in swift-corelibs-xctest, which has
// no `XCTIssue`.
import XCTest

enum XCTestFailureRecorder {
    private final class Observer: NSObject, XCTestObservation, @unchecked Sendable {  // `current` is guarded by `lock`
        let current = LockedState<XCTestCase?>(nil)
        func testCaseWillStart(_ testCase: XCTestCase) { current.withLock { $0 = testCase } }
        func testCaseDidFinish(_ testCase: XCTestCase) { current.withLock { if $0 === testCase { $0 = nil } } }
    }

    private static let observer: Observer = {
        let observer = Observer()
        XCTestObservationCenter.shared.addTestObserver(observer)
        return observer
    }()

    /// Registers the observer; call early (BridgesTesting does when a helper is first used).
    static func start() { _ = observer }

    static var isRunningXCTest: Bool { observer.current.withLock { $0 != nil } }

    static func record(_ message: String, file: String, line: UInt) {
        guard let testCase = observer.current.withLock({ $0 }) else { return }
        #if canImport(Darwin)
        let location = XCTSourceCodeLocation(filePath: file, lineNumber: Int(line))
        testCase.record(
            XCTIssue(
                type: .assertionFailure, compactDescription: message,
                sourceCodeContext: XCTSourceCodeContext(location: location)))
        #else
        testCase.recordFailure(withDescription: message, inFile: file, atLine: Int(line), expected: true)
        #endif
    }
}
