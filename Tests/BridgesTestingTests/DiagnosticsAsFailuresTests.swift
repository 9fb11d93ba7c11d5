import BridgesTesting
import Dispatch
import Testing

@Suite(.timeLimit(.minutes(3))) struct DiagnosticsAsFailuresTests {
    @Test func callbackCalledTwice_failsTheTestAtTheBridgesCallSite() async throws {
        let api = FakeCompletionAPI<Void, Int>()
        let bridgeLine = #line + 4
        try await withKnownIssue {
            try await withBridgesDiagnosticsAsFailures {
                let task = Task {
                    try await withCallback { done in api.call(completion: done) }
                }
                _ = try await api.nextInvocation()
                api.callTwice(with: 1)
                #expect(try await task.value == 1)
            }
        } matching: { issue in
            issue.sourceLocation?.line == bridgeLine && issue.description.contains("callbackCalledTwice")
        }
    }

    @Test func misuseReportedFromAnotherThread_isRecordedOnTheTest() async throws {
        let api = FakeCompletionAPI<Void, Int>()
        let bridgeLine = #line + 4
        try await withKnownIssue {
            try await withBridgesDiagnosticsAsFailures {
                let task = Task {
                    try await withCallback { done in api.call(completion: done) }
                }
                let call = try await api.nextInvocation()
                await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                    DispatchQueue.global().async {  // a legacy API dropping its handler on its queue
                        call.drop()
                        finished.resume()
                    }
                }
                await #expect(throws: BridgeError.callbackDropped) { try await task.value }
            }
        } matching: { issue in
            issue.sourceLocation?.line == bridgeLine && issue.description.contains("callbackDropped")
        }
    }

    @Test func correctUse_recordsNothing() async throws {
        let api = FakeCompletionAPI<Void, Int>()
        try await withBridgesDiagnosticsAsFailures {
            let task = Task { try await withCallback { done in api.call(completion: done) } }
            try await api.nextInvocation().complete(with: 3)
            #expect(try await task.value == 3)
        }
    }

    @Test func failTestsHandler_recordsAtTheCallSite() {
        withKnownIssue {
            Diagnostics.failTests(
                BridgeDiagnostic(kind: .yieldAfterFinish, message: "late", fileID: "App/Feed.swift", line: 7))
        } matching: { issue in
            issue.sourceLocation?.fileID == "App/Feed.swift" && issue.sourceLocation?.line == 7
        }
    }
}
