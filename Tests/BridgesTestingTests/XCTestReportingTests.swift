import Bridges
import BridgesTesting
import XCTest

/// Under XCTest (no Swift Testing test running), failures reach the running `XCTestCase` with
/// the reporter's file and line. This case captures them instead of failing, by overriding the
/// method BridgesTesting calls (`record(_:)` on Apple platforms, `recordFailure` elsewhere).
final class XCTestReportingTests: XCTestCase {
    private struct Recorded: Equatable {
        let description: String
        let file: String
        let line: Int

        /// Located at `fileID`:`line`: as the failure's own location (once BridgesTesting has
        /// seen the test case start), or in its text (through XCTFail before that).
        func isAt(_ fileID: String, _ line: Int) -> Bool {
            (file == fileID && self.line == line) || description.contains("\(fileID):\(line):")
        }
    }

    private let recorded = LockedState<[Recorded]>([])

    /// Whether a failure at `filePath` with `description` is BridgesTesting's report about this file.
    private static func isOurs(_ description: String, _ filePath: String) -> Bool {
        filePath == #fileID || filePath.hasSuffix("/\(#fileID)") || description.contains("\(#fileID):")
    }

    #if canImport(Darwin)
    /// Captures BridgesTesting's failures; the test's own assertion failures still fail it.
    override func record(_ issue: XCTIssue) {
        let location = issue.sourceCodeContext.location
        let filePath = location?.fileURL.path ?? ""
        guard Self.isOurs(issue.compactDescription, filePath) else { return super.record(issue) }
        let file = filePath.hasSuffix("/\(#fileID)") ? #fileID : filePath
        recorded.withLock {
            $0.append(Recorded(description: issue.compactDescription, file: file, line: location?.lineNumber ?? 0))
        }
    }
    #else
    /// Captures BridgesTesting's failures; the test's own assertion failures still fail it.
    override func recordFailure(
        withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool
    ) {
        guard Self.isOurs(description, filePath) else {
            return super.recordFailure(
                withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
        }
        recorded.withLock { $0.append(Recorded(description: description, file: filePath, line: lineNumber)) }
    }
    #endif

    private func recordedFailures() -> [Recorded] {
        recorded.withLock { $0 }
    }

    func testBridgeMisuse_isRecordedOnTheRunningTestCaseAtTheBridgesCallSite() async throws {
        let api = FakeCompletionAPI<Void, Int>()
        let bridgeLine = #line + 3
        try await withBridgesDiagnosticsAsFailures {
            let task = Task {
                try await withCallback { done in api.call(completion: done) }
            }
            _ = try await api.nextInvocation()
            api.callTwice(with: 1)
            let value = try await task.value
            XCTAssertEqual(value, 1)
        }
        let failures = recordedFailures()
        // At the bridge's call site: as the failure's location once BridgesTesting has seen the
        // test case start, and in any case in its text.
        XCTAssertEqual(failures.count, 1)
        XCTAssertTrue(failures.first?.isAt(#fileID, bridgeLine) == true)
        XCTAssertTrue(failures.first?.description.contains("Bridges misuse (callbackCalledTwice)") == true)
    }

    func testClockExpectation_isRecordedOnTheRunningTestCase() async {
        let clock = TestClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
        await clock.waitForSleepers(1)
        await clock.expectNoPendingSleepers()
        let line = #line - 1
        sleeper.cancel()
        _ = await sleeper.result
        let failures = recordedFailures()
        XCTAssertEqual(failures.count, 1)
        XCTAssertTrue(failures.first?.isAt(#fileID, line) == true)
    }
}
