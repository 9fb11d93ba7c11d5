// The shapes README ("Completion handler → async"), CompletionHandlers.md and MIGRATION ("Swift 6
// with legacy types", 1 and 6) document over an Objective-C-style `(User?, Error?)` client whose
// request handle is not Sendable (Tests/LegacySDK): each compiles as written in a Swift 6
// `@MainActor` view model, and cancels exactly the call it belongs to.
import Bridges
import BridgesTesting
import LegacySDK
import TestSupport
import Testing

enum LookupError: Error { case missingID }

@MainActor final class UserScreen {
    let client = LegacyUserClient()
    var selectedID: Int?

    /// README, CompletionHandlers.md: the handle returned as the token.
    func user(_ id: Int) async throws -> LegacySDK.User {
        try await withCallback { done in
            let request = client.fetchUser(id, completion: done)
            return Cancellation { request.cancel() }
        }
    }

    /// MIGRATION, "Swift 6 with legacy types" 6: a check before the call, an explicit return.
    func selectedUser() async throws -> LegacySDK.User {
        try await withCallback { done in
            guard let id = selectedID else { throw LookupError.missingID }
            let request = client.fetchUser(id, completion: done)
            return Cancellation { request.cancel() }
        }
    }
}

@Suite("Documented patterns over an Objective-C-style legacy client", .timeLimit(.minutes(1)))
@MainActor
struct DocumentedPatternsTests {
    @Test func optionalPairHandler_overlappingCalls_cancellingTheFirstCancelsOnlyItsRequest() async throws {
        try await withLeakTracking { (tracker: LeakTracker) async throws in
            let screen = UserScreen()
            tracker.track(screen)
            let started = Collected<Int>()
            let cancelled = Collected<Int>()
            screen.client.onRequest = { request in
                request.onCancel = { cancelled.append($0.id) }
                started.append(request.id)
            }
            let first = Task { try await screen.user(1).name }
            let second = Task { try await screen.user(2).name }
            await started.wait(count: 2)
            first.cancel()
            await #expect(throws: CancellationError.self) { try await first.value }
            await cancelled.wait(count: 1)
            #expect(cancelled.values == [1])
            #expect(screen.client.requests[0].cancelledOnMainQueue, "the token ran on the main actor")
            #expect(!screen.client.requests[1].isCancelled, "the second call's request is untouched")
            screen.client.complete(screen.client.requests[1], with: LegacySDK.User(id: 2, name: "Grace"))
            let name = try await second.value
            #expect(name == "Grace")
            #expect(cancelled.values == [1])
        }
    }

    @Test func guardBeforeTheCall_throwsWithoutCallingTheClient_orCallsIt() async throws {
        let screen = UserScreen()
        await #expect(throws: LookupError.missingID) { _ = try await screen.selectedUser() }
        #expect(screen.client.requests.isEmpty)

        screen.selectedID = 7
        let started = Gate()
        screen.client.onRequest = { _ in started.open() }
        let call = Task { try await screen.selectedUser().id }
        await started.wait()
        screen.client.complete(screen.client.requests[0], with: LegacySDK.User(id: 7, name: "Ada"))
        let id = try await call.value
        #expect(id == 7)
    }
}
