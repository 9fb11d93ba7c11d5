import BridgesTesting
import Testing

/// `expectDiagnostics` passes a test of intended misuse without a known issue, and fails one
/// whose misuse was not reported, or reported differently, at its own call site.
@Suite(.timeLimit(.minutes(3))) struct ExpectDiagnosticsTests {
    @Test func doubleCallback_isExpected_andTheFirstValueWins() async throws {
        let api = FakeCompletionAPI<Void, Int>()
        let value = try await expectDiagnostics([.callbackCalledTwice]) {
            async let value = withCallback { done in api.call(completion: done) }
            try await api.nextInvocation().callTwice(with: 1)
            return try await value
        }
        #expect(value == 1)
    }

    @Test func reportsFromAnotherThread_areCounted() async throws {
        let api = FakeCompletionAPI<Void, Int>()
        try await expectDiagnostics([.callbackDropped]) {
            let task = Task { try await withCallback { done in api.call(completion: done) } }  // inherits the handler
            let call = try await api.nextInvocation()
            await Task.detached { call.drop() }.value  // the handler is released on another thread
            await #expect(throws: BridgeError.callbackDropped) { try await task.value }
        }
    }

    @Test func missingDiagnostic_failsAtTheCallSite() async throws {
        let api = FakeCompletionAPI<Void, Int>()
        let expectLine = #line + 2
        try await withKnownIssue {  // this test is about the helper failing a test
            try await expectDiagnostics([.callbackCalledTwice]) {
                async let value = withCallback { done in api.call(completion: done) }
                try await api.nextInvocation().complete(with: 1)
                _ = try await value
            }
        } matching: { issue in
            issue.sourceLocation?.line == expectLine
                && issue.comments.contains { $0.rawValue.contains("missing [callbackCalledTwice]") }
        }
    }

    @Test func unexpectedDiagnostic_failsNamingIt() {
        withKnownIssue {
            expectDiagnostics([]) {
                Diagnostics.current(
                    BridgeDiagnostic(kind: .yieldAfterFinish, message: "late", fileID: "App/Feed.swift", line: 7))
            }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("unexpected: App/Feed.swift:7") }
        }
    }
}
