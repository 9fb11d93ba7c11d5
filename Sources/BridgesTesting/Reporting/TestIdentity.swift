// Tells withSerialTasks' scheduler which Swift Testing test a task belongs to, so that a scope
// recognises a task its own test made before it opened (see BridgesQuiescence's `JobRouter`).
import BridgesQuiescence
import Testing

enum TestIdentity {
    /// Installs the reader once; called when a scope opens.
    static func install() { _ = installed }

    /// The test's id, and for a parameterized test the case too (its arguments: the cases of
    /// one test run in parallel).
    private static let installed: Void = JobRouter.shared.identifyTests {
        guard let test = Test.current else { return nil }
        guard let testCase = Test.Case.current, testCase.isParameterized else { return String(describing: test.id) }
        return "\(test.id) \(testCase)"
    }
}
