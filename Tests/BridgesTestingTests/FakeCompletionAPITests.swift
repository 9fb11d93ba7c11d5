import BridgesTesting
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct FakeCompletionAPITests {
    /// Something the code under test captures in its completion handler, to check that the
    /// fake releases the handler once it is finished with it.
    final class Resource: Sendable {}

    @Test func complete_deliversTheValueAndReleasesTheHandler() async throws {
        let api = FakeCompletionAPI<Int, String>()
        try await withLeakTracking { tracker in
            let resource = Resource()
            tracker.track(resource)
            let task = Task { [resource] in
                try await withCallback { (done: @escaping @Sendable (Result<String, any Error>) -> Void) in
                    api.call(42) { result in
                        _ = resource
                        done(result)
                    }
                }
            }
            let call = try await api.nextInvocation()
            #expect(call.index == 0)
            #expect(call.request == 42)
            #expect(!call.isFinished)
            call.complete(with: "user-42")
            #expect(try await task.value == "user-42")
            #expect(call.isFinished)
            #expect(!api.cancellationReached)
        }
    }

    @Test func fail_deliversTheError() async throws {
        let api = FakeCompletionAPI<Void, Int>()
        let task = Task { try await withCallback { done in api.call(completion: done) } }
        _ = try await api.nextInvocation()
        api.fail(Boom())
        await #expect(throws: Boom.self) { try await task.value }
    }

    @Test func callTwice_isIgnoredByTheBridgeAndReportedAtItsCallSite() async throws {
        let api = FakeCompletionAPI<Void, Int>()
        let diagnostics = Collected<BridgeDiagnostic>()
        let bridgeLine: UInt = #line + 3
        let task = Task {
            try await Diagnostics.withHandler({ diagnostics.append($0) }) {
                try await withCallback { done in api.call(completion: done) }
            }
        }
        _ = try await api.nextInvocation()
        api.callTwice(with: 7)
        #expect(try await task.value == 7)
        #expect(diagnostics.values.map(\.kind) == [.callbackCalledTwice])
        #expect(diagnostics.values.first?.line == bridgeLine)
        #expect(diagnostics.values.first?.fileID == #fileID)
    }

    @Test func drop_releasesTheHandlerSoTheBridgeThrowsInsteadOfHanging() async throws {
        let api = FakeCompletionAPI<Void, Int>()
        let diagnostics = Collected<BridgeDiagnostic>()
        let task = Task {
            try await Diagnostics.withHandler({ diagnostics.append($0) }) {
                try await withCallback { done in api.call(completion: done) }
            }
        }
        _ = try await api.nextInvocation()
        api.drop()
        await #expect(throws: BridgeError.callbackDropped) { try await task.value }
        #expect(diagnostics.values.map(\.kind) == [.callbackDropped])
    }

    @Test func cancellingTheTask_reachesTheLegacyCall() async throws {
        let api = FakeCompletionAPI<Void, Int>()
        let late = Collected<Int>()
        let task = Task {
            try await withCallback(onLateResult: { late.append(try! $0.get()) }) { done in
                api.call(completion: done)
            }
        }
        let call = try await api.nextInvocation()
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(await call.waitForCancellation())
        #expect(call.isCancelled)
        #expect(api.cancellationReached)
        #expect(api.cancellationCount == 1)
        call.complete(with: 5)  // the legacy API answers anyway: the bridge hands it over as late
        #expect(late.values == [5])
    }

    @Test func timeoutOnATestClock_elapsesOnlyWhenVirtualTimeReachesIt() async throws {
        let api = FakeCompletionAPI<Void, Int>()
        let clock = TestClock()
        try await withSerialTasks {
            let task = Task {
                try await withCallback(timeout: .after(.seconds(5), on: clock)) { done in api.call(completion: done) }
            }
            let call = try await api.nextInvocation()
            await clock.advance(by: .milliseconds(4999))
            #expect(!call.isCancelled)
            await clock.advance(by: .milliseconds(1))
            await #expect(throws: BridgeError.timedOut) { try await task.value }
            #expect(call.isCancelled)
            await clock.expectNoPendingSleepers()
        }
    }

    @Test func timeoutOnAnImmediateClock_elapsesAtOnce() async throws {
        let api = FakeCompletionAPI<Void, Int>()
        let task = Task {
            try await withCallback(timeout: .after(.seconds(3600), on: ImmediateClock())) { done in
                api.call(completion: done)
            }
        }
        await #expect(throws: BridgeError.timedOut) { try await task.value }
        let call = try await api.nextInvocation()
        #expect(await call.waitForCancellation())
    }

    @Test func invocations_areRecordedInCallOrder() async throws {
        let api = FakeCompletionAPI<String, Int>()
        let tasks = ["a", "b", "c"].map { name in
            Task { try await withCallback { done in api.call(name, completion: done) } }
        }
        var requests: [String] = []
        for _ in 0..<3 { requests.append(try await api.nextInvocation().request) }
        #expect(requests.sorted() == ["a", "b", "c"])
        #expect(api.invocations.map(\.index) == [0, 1, 2])
        for invocation in api.invocations { invocation.complete(with: invocation.index) }
        for task in tasks { _ = try await task.value }
    }

    @Test func finishingACallTwice_failsTheTest() async throws {
        let api = FakeCompletionAPI<Void, Int>()
        api.call { _ in }
        let call = try await api.nextInvocation()
        call.complete(with: 1)
        withKnownIssue {
            call.complete(with: 2)
        }
        withKnownIssue {
            api.complete(with: 3)  // no pending call left
        }
    }

    /// 50 times: a bound that elapses before the wait has even registered still ends it.
    @Test func nextInvocation_whenNobodyCalls_failsInsteadOfHanging() async {
        let api = FakeCompletionAPI<Void, Int>()
        for _ in 0..<50 {
            await withKnownIssue {
                _ = try await api.nextInvocation(timeout: .zero)
            }
        }
    }

    /// The fake takes what `withCallback` takes: a value that is not `Sendable`, handed over once.
    @MainActor
    @Test func complete_handsOverANonSendableValue() async throws {
        let api = FakeCompletionAPI<Int, Photo>()
        let task = Task { @MainActor in
            let photo = try await withCallback { done in api.call(7, completion: done) }
            return photo.bytes
        }
        let call = try await api.nextInvocation()
        #expect(call.request == 7)
        call.complete(with: Photo(bytes: [1, 2, 3]))
        #expect(try await task.value == [1, 2, 3])
        #expect(call.isFinished)
    }
}

/// What a Swift 5 SDK hands back: a plain class, never made `Sendable`.
private final class Photo {
    var bytes: [UInt8]
    init(bytes: [UInt8]) { self.bytes = bytes }
}
