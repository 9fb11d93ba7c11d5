#if Macros
import BridgesMacros
import LegacyFixtures
import BridgesTesting
import Testing

// The overloads `@Bridged` and `@BridgedAll` wrote for LegacySDK.swift (a Swift 5-mode module of
// non-Sendable classes), called from Swift 6 code on the main actor, keep withCallback's
// guarantees. That this file compiles is itself the Swift 6 check: the overloads are
// `nonisolated(nonsending)`, so awaiting them on a non-Sendable client sends nothing.
@MainActor
@Suite(.timeLimit(.minutes(1)))
struct BridgedRuntimeTests {
    // MARK: - (Result<T, Error>) returning a handle

    @Test func result_returnsWhatTheHandlerPassed() async throws {
        try await withLeakTracking { tracker in
            let client = LegacyClient()
            tracker.track(client)
            let task = Task { try await client.fetchName(id: 7) }
            let call = try await client.names.nextInvocation()
            #expect(call.request == 7)
            call.complete(with: "Ada")
            #expect(try await task.value == "Ada")
        }
    }

    @Test func result_secondCall_isIgnoredAndReported() async throws {
        let client = LegacyClient()
        try await expectDiagnostics([.callbackCalledTwice]) {
            let task = Task { try await client.fetchName(id: 1) }
            let call = try await client.names.nextInvocation()
            call.callTwice(with: "once")
            #expect(try await task.value == "once")
        }
    }

    @Test func result_droppedHandler_throwsCallbackDropped() async throws {
        let client = LegacyClient()
        try await expectDiagnostics([.callbackDropped]) {
            let task = Task { try await client.fetchName(id: 1) }
            let call = try await client.names.nextInvocation()
            call.drop()
            await #expect(throws: BridgeError.callbackDropped) { try await task.value }
        }
    }

    @Test func result_cancellingTheTask_cancelsTheReturnedHandle() async throws {
        try await withLeakTracking { tracker in
            let client = LegacyClient()
            tracker.track(client)
            let task = Task { try await client.fetchName(id: 1) }
            let call = try await client.names.nextInvocation()
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(call.isCancelled)
            call.complete(with: "late")  // the legacy API answers anyway; nobody is waiting
        }
    }

    // MARK: - (Result<T, E>) with a concrete E: typed throws

    @Test func typedResult_throwsCallbackFailureOfTheSDKsError() async throws {
        let client = LegacyClient()
        let task = Task { () async -> CallbackFailure<LegacyError>? in
            // Compiles only if the overload throws CallbackFailure<LegacyError> and nothing else.
            do throws(CallbackFailure<LegacyError>) {
                _ = try await client.fetchTypedName(id: 3)
                return nil
            } catch {
                return error  // typed: no cast
            }
        }
        let call = try await client.names.nextInvocation()
        call.fail(LegacyError(code: 4))
        #expect(await task.value == .failure(LegacyError(code: 4)))
    }

    @Test func typedResult_cancelled_throwsCancelled_andCancelsTheCall() async throws {
        let client = LegacyClient()
        let task = Task { () async -> CallbackFailure<LegacyError>? in
            do throws(CallbackFailure<LegacyError>) {
                _ = try await client.fetchTypedName(id: 3)
                return nil
            } catch {
                return error
            }
        }
        let call = try await client.names.nextInvocation()
        task.cancel()
        #expect(await task.value == .cancelled)
        #expect(call.isCancelled)
    }

    // MARK: - (T?, Error?) returning an optional handle

    @Test func valueOrError_value_andCancellationReachesTheOptionalHandle() async throws {
        let client = LegacyClient()
        let first = Task { try await client.lookUp(1) }
        try await client.names.nextInvocation().complete(with: "one")
        #expect(try await first.value == "one")

        let second = Task { try await client.lookUp(2) }
        let call = try await client.names.nextInvocation()
        second.cancel()
        await #expect(throws: CancellationError.self) { try await second.value }
        #expect(call.isCancelled)
    }

    // MARK: - (T) returning nothing

    @Test func value_returnsTheValue_andCancellationEndsTheWaitOnly() async throws {
        let client = LegacyClient()
        let first = Task { try await client.nextEvent() }
        try await client.events.nextInvocation().complete(with: 5)
        #expect(try await first.value == 5)

        let second = Task { try await client.nextEvent() }
        let call = try await client.events.nextInvocation()
        second.cancel()
        await #expect(throws: CancellationError.self) { try await second.value }
        #expect(!call.isCancelled, "the method returns no handle, so nothing can cancel the call")
        call.complete(with: 6)
    }

    // MARK: - (Error?)

    @Test func error_throwsTheSDKsError_orReturns() async throws {
        let client = LegacyClient()
        let failing = Task { try await client.save(1) }
        try await client.names.nextInvocation().fail(LegacyError(code: 9))
        await #expect(throws: LegacyError(code: 9)) { try await failing.value }

        let succeeding = Task { try await client.save(2) }
        try await client.names.nextInvocation().complete(with: "")
        try await succeeding.value
    }

    // MARK: - () with a timeout

    @Test func none_timeout_throwsTimedOut_andCancelsTheCall() async throws {
        let clock = LegacyAnimator.clock  // only this test uses it
        let animator = LegacyAnimator()
        let task = Task { try await animator.run() }
        let call = try await animator.runs.nextInvocation()
        await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(5))
        await #expect(throws: BridgeError.timedOut) { try await task.value }
        #expect(call.isCancelled)
    }

    // MARK: - A free function and a protocol

    @Test func freeFunction() async throws {
        let client = LegacyClient()
        let task = Task { try await legacyGreeting(for: client) }
        try await client.names.nextInvocation().complete(with: "hello")
        #expect(try await task.value == "hello")
    }

    @Test func bridgedAllProtocol_conformerGetsTheAsyncForms() async throws {
        try await withLeakTracking { tracker in
            let accounts = LegacyAccounts()
            tracker.track(accounts)
            let service: any LegacyAccountService = accounts
            let load = Task { try await service.loadAccounts() }
            try await accounts.api.nextInvocation().complete(with: ["a", "b"])
            #expect(try await load.value == ["a", "b"])

            let remove = Task { try await service.remove("a") }
            let call = try await accounts.api.nextInvocation()
            #expect(call.request == "a")
            remove.cancel()
            await #expect(throws: CancellationError.self) { try await remove.value }
            call.complete(with: [])
        }
    }
}
#endif
