// Records failures on the running XCTestCase with the caller's file and line as Strings.
//
// `XCTFail` only takes a `StaticString` file, and a bridge's call site is a runtime `String`
// (`#fileID` captured when the bridge was created), so this observes test cases as they start
// and finish and records an issue on the current one: `record(_:)` with an `XCTIssue` on Apple
// platforms (where `recordFailure(withDescription:…)` is unavailable to Swift), and
// `recordFailure(withDescription:inFile:atLine:expected:)` in swift-corelibs-xctest, which has
// no `XCTIssue`.
import Dispatch
import Foundation
import XCTest

enum XCTestFailureRecorder {
    fileprivate final class Observer: NSObject, @unchecked Sendable {  // `current` is guarded by its lock
        let current = LockedState<XCTestCase?>(nil)
    }

    private static let observer = Observer()
    private static let registered = LockedState(false)

    /// Registers the observer on the main thread, where Apple's XCTest requires it ("Test
    /// observers can only be registered and unregistered on the main thread"); called when a
    /// helper is first used. On another thread (an async test) registration is queued to the
    /// main queue, which XCTest's runner drains while it waits for the test; until then
    /// failures go through `XCTFail` with the location in the message (see `_reportTestFailure`).
    static func start() {
        if Thread.isMainThread {
            MainActor.assumeIsolated { register() }
        } else {
            DispatchQueue.main.async { register() }  // a main-queue block runs on the main actor
        }
    }

    /// Main-actor isolated: whether or not the SDK marks XCTest's observation API `@MainActor`,
    /// the call is made where XCTest requires it.
    @MainActor
    private static func register() {
        let first = registered.withLock { registered in
            defer { registered = true }
            return !registered
        }
        guard first else { return }
        XCTestObservationCenter.shared.addTestObserver(observer)
    }

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

/// The conformance is declared in an extension: should an SDK mark `XCTestObservation`
/// `@MainActor`, that isolates the methods below only, not the class, so `Observer()` above still
/// runs in a nonisolated static initializer. The methods are nonisolated either way (XCTest calls
/// them on the main thread; `current` has its own lock).
extension XCTestFailureRecorder.Observer: XCTestObservation {
    func testCaseWillStart(_ testCase: XCTestCase) { current.withLock { $0 = testCase } }
    func testCaseDidFinish(_ testCase: XCTestCase) { current.withLock { if $0 === testCase { $0 = nil } } }
}
