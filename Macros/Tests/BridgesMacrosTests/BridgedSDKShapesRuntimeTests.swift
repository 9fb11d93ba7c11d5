#if Macros
import BridgesMacros
import BridgesTesting
import Foundation
import LegacyFixtures
import Testing

// The overloads `@Bridged` wrote for LegacySDKShapes.swift (a Swift 5 module whose classes call
// back on a queue of their own), called from Swift 6 code on the main actor: the shapes Apple's
// importer bridges, several closures, a success/failure pair and a returned id keep withCallback's
// guarantees. A closure the SDK calls on its queue would trap here if it were isolated to the
// main actor: every one the overloads pass or pass on is `@Sendable`.
/// An app's `@MainActor` facade (Swift 6) over the SDK, with `@Bridged` on its own methods: the
/// overloads are main-actor isolated, and the closures they hand the SDK must not be.
@MainActor
final class AccessFacade {
    let shapes = LegacyShapes()
    let downloader = LegacyDownloader()

    @Bridged
    func requestContacts(completion: @escaping (Bool, Error?) -> Void) {
        shapes.requestAccess(to: "contacts", completionHandler: completion)
    }

    @Bridged
    func signIn(user: String, success: @escaping (String) -> Void, failure: @escaping (Error) -> Void) {
        _ = downloader.signIn(user: user, success: success, failure: failure)
    }
}

@MainActor
@Suite(.timeLimit(.minutes(1)))
struct BridgedSDKShapesRuntimeTests {
    struct Refused: Error, Equatable {}

    // MARK: - (Bool, Error?) and (Status, Error?)

    @Test func boolAndError_returnsTheBool_orThrowsTheError() async throws {
        try await withLeakTracking { tracker in
            let sdk = LegacyShapes()
            tracker.track(sdk)
            let granted = Task { try await sdk.requestAccess(to: "contacts") }
            let call = try await sdk.permissions.nextInvocation()
            #expect(call.request == "contacts")
            call.complete(with: true)
            #expect(try await granted.value)

            let refused = Task { try await sdk.requestAccess(to: "photos") }
            try await sdk.permissions.nextInvocation().fail(Refused())
            await #expect(throws: Refused()) { try await refused.value }
        }
    }

    @Test func boolAndError_denied_isAValue_notAnError() async throws {
        let sdk = LegacyShapes()
        let denied = Task { try await sdk.requestAccess(to: "camera") }
        try await sdk.permissions.nextInvocation().complete(with: false)
        #expect(try await denied.value == false)
    }

    @Test func statusAndError_nonOptionalStatus_theErrorWins() async throws {
        let sdk = LegacyShapes()
        let active = Task { try await sdk.status(of: 1) }
        try await sdk.statuses.nextInvocation().complete(with: .active)
        #expect(try await active.value == .active)

        // The SDK passes `.unknown` beside the error: the error is what the caller sees.
        let failed = Task { try await sdk.status(of: 2) }
        try await sdk.statuses.nextInvocation().fail(Refused())
        await #expect(throws: Refused()) { try await failed.value }
    }

    @Test func boolAndError_secondCall_isIgnoredAndReported() async throws {
        let sdk = LegacyShapes()
        try await expectDiagnostics([.callbackCalledTwice]) {
            let task = Task { try await sdk.requestAccess(to: "contacts") }
            try await sdk.permissions.nextInvocation().callTwice(with: true)
            #expect(try await task.value)
            await SDKQueue.drained()
        }
    }

    // MARK: - Several values and an error

    @Test func twoValuesAndError_returnsBoth_andCancellationReachesTheHandle() async throws {
        try await withLeakTracking { tracker in
            let sdk = LegacyShapes()
            tracker.track(sdk)
            let page = Task {
                let (body, response) = try await sdk.page(1)  // (String, LegacyResponse)
                return (body, response.code)
            }
            try await sdk.pages.nextInvocation().complete(
                with: LegacyPage(body: "<html>", response: LegacyResponse(code: 200)))
            let (body, code) = try await page.value
            #expect(body == "<html>")
            #expect(code == 200)

            let cancelled = Task { _ = try await sdk.page(2) }
            let call = try await sdk.pages.nextInvocation()
            cancelled.cancel()
            await #expect(throws: CancellationError.self) { try await cancelled.value }
            #expect(call.isCancelled)
        }
    }

    @Test func twoValuesAndError_aMissingValueWithoutError_throwsMissingValueAndError() async throws {
        let sdk = LegacyShapes()
        try await expectDiagnostics([.callbackWithoutValueOrError]) {
            let page = Task { _ = try await sdk.page(3) }
            try await sdk.pages.nextInvocation().complete(with: LegacyPage(body: "<html>", response: nil))
            await #expect(throws: BridgeError.missingValueAndError) { try await page.value }
        }
    }

    @Test func twoValuesAndError_droppedHandler_throwsCallbackDropped() async throws {
        let sdk = LegacyShapes()
        try await expectDiagnostics([.callbackDropped]) {
            let page = Task { _ = try await sdk.page(4) }
            try await sdk.pages.nextInvocation().drop()
            await #expect(throws: BridgeError.callbackDropped) { try await page.value }
        }
    }

    // MARK: - NSError? and a handler that is not last

    @Test func nsError_isThrown() async throws {
        let sdk = LegacyShapes()
        let found = Task { try await sdk.record(1) }
        try await sdk.records.nextInvocation().complete(with: "one")
        #expect(try await found.value == "one")

        let failed = Task { try await sdk.record(2) }
        try await sdk.records.nextInvocation().fail(NSError(domain: "Legacy", code: 7))
        await #expect {
            try await failed.value
        } throws: { error in
            (error as NSError).domain == "Legacy" && (error as NSError).code == 7
        }
    }

    @Test func handlerNotLast_theOtherParametersPassedOn_andCancellationReachesTheHandle() async throws {
        let sdk = LegacyShapes()
        let upload = Task { try await sdk.upload("photo.jpg", priority: 2) }
        let call = try await sdk.uploads.nextInvocation()
        #expect(call.request == "photo.jpg")
        upload.cancel()
        await #expect(throws: CancellationError.self) { try await upload.value }
        #expect(call.isCancelled)
    }

    // MARK: - A completion beside a progress closure

    @Test func progressPassedOn_calledOnTheSDKsQueue_fromAMainActorCaller() async throws {
        try await withLeakTracking { tracker in
            let downloader = LegacyDownloader()
            tracker.track(downloader)
            let (progress, reports) = AsyncStream.makeStream(of: Double.self)
            // Written on the main actor; the SDK calls it on its own queue. Were the parameter not
            // @Sendable, this closure would be main-actor isolated, and that call would trap.
            let file = Task { try await downloader.download("https://x/1", progress: { reports.yield($0) }) }
            try await downloader.downloads.nextInvocation().complete(with: "/tmp/1")
            #expect(try await file.value == "/tmp/1")
            reports.finish()
            var seen: [Double] = []
            for await value in progress { seen.append(value) }
            #expect(seen == [0.5, 1.0])
        }
    }

    // MARK: - A success/failure pair

    @Test func successFailurePair_success_returnsTheValue() async throws {
        try await withLeakTracking { tracker in
            let downloader = LegacyDownloader()
            tracker.track(downloader)
            let session = Task { try await downloader.signIn(user: "ada") }
            let call = try await downloader.signIns.nextInvocation()
            #expect(call.request == "ada")
            call.complete(with: "token")
            #expect(try await session.value == "token")
        }
    }

    @Test func successFailurePair_failure_throwsTheError() async throws {
        let downloader = LegacyDownloader()
        let session = Task { try await downloader.signIn(user: "eve") }
        try await downloader.signIns.nextInvocation().fail(Refused())
        await #expect(throws: Refused()) { try await session.value }
    }

    @Test func successFailurePair_bothCalled_theSecondIsIgnoredAndReported() async throws {
        let downloader = LegacyDownloader()
        try await expectDiagnostics([.callbackCalledTwice]) {
            let session = Task { try await downloader.signIn(user: "ada") }
            try await downloader.signIns.nextInvocation().callTwice(with: "token")
            #expect(try await session.value == "token")
            await SDKQueue.drained()
        }
    }

    @Test func successFailurePair_bothDropped_throwsCallbackDropped_cancellationReachesTheHandle() async throws {
        let downloader = LegacyDownloader()
        try await expectDiagnostics([.callbackDropped]) {
            let dropped = Task { try await downloader.signIn(user: "ada") }
            try await downloader.signIns.nextInvocation().drop()
            await #expect(throws: BridgeError.callbackDropped) { try await dropped.value }
        }
        let cancelled = Task { try await downloader.signIn(user: "bob") }
        let call = try await downloader.signIns.nextInvocation()
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(call.isCancelled)
    }

    // MARK: - A main-actor type's overloads

    @Test func mainActorFacade_adaptersCalledOnTheSDKsQueue_doNotTrap() async throws {
        try await withLeakTracking { tracker in
            let facade = AccessFacade()
            tracker.track(facade)
            // The overloads run on the main actor; the SDK calls what they passed it on its own
            // queue. A closure isolated to the main actor would trap there.
            let granted = Task { try await facade.requestContacts() }
            try await facade.shapes.permissions.nextInvocation().complete(with: true)
            #expect(try await granted.value)

            let session = Task { try await facade.signIn(user: "ada") }
            try await facade.downloader.signIns.nextInvocation().complete(with: "token")
            #expect(try await session.value == "token")
        }
    }

    // MARK: - A returned request id

    @Test func returnedIdIgnored_valueReturned_cancellationEndsTheWaitOnly() async throws {
        let downloader = LegacyDownloader()
        let first = Task { try await downloader.requestThumbnail(1) }
        try await downloader.thumbnails.nextInvocation().complete(with: "thumb")
        #expect(try await first.value == "thumb")

        let second = Task { try await downloader.requestThumbnail(2) }
        let call = try await downloader.thumbnails.nextInvocation()
        second.cancel()
        await #expect(throws: CancellationError.self) { try await second.value }
        #expect(!call.isCancelled, "an id has no cancel(): the call goes on")
        call.complete(with: "late")
    }
}
#endif
