import Bridges
import ExampleTesting
import Testing

/// Makes ExampleTesting's helpers (the examples' copy of BridgesTesting's, without a test
/// framework) record their failures as issues of the running test, as BridgesTesting's do.
func recordExampleTestingFailuresAsIssues() {
    exampleTestingFailureHook.withLock {
        $0 = ExampleTestingFailureHook { message, fileID, line in
            Issue.record(
                Comment(rawValue: message),
                sourceLocation: SourceLocation(fileID: fileID, filePath: fileID, line: Int(line), column: 1))
        }
    }
}
