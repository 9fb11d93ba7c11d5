#if Macros
import BridgesMacros
import BridgesTesting
import Foundation
import LegacyFixtures
import Testing

// SDKs nobody can put `@Bridged` on: the app restates the methods it uses in a `@BridgedAll`
// protocol, with the signatures Xcode's generated interface shows, and conforms the SDK types to
// it retroactively. Swift 6 code, as an app writes it; the stand-ins (AppleSDKStandIns.swift) are
// Swift 5 classes that call back on a queue of their own.

@BridgedAll
protocol GeocodingService {
    // The SDK spells the handler `StandInGeocodeCompletionHandler`; a macro cannot see through a
    // typealias, so the protocol spells the function type out (the same type: the SDK conforms).
    func reverseGeocodeLocation(
        _ location: StandInLocation,
        completionHandler: @escaping @Sendable ([StandInPlacemark]?, Error?) -> Void)
}
extension StandInGeocoder: GeocodingService {}

@BridgedAll
protocol NotificationPermissions {
    func requestAuthorization(
        options: StandInAuthorizationOptions, completionHandler: @escaping @Sendable (Bool, Error?) -> Void)
}
extension StandInNotificationCenter: NotificationPermissions {}

@BridgedAll
protocol PhotoPermissions {
    static func requestAuthorization(
        for accessLevel: StandInAccessLevel, handler: @escaping @Sendable (StandInAuthorizationStatus) -> Void)
}
extension StandInPhotoLibrary: PhotoPermissions {}

@BridgedAll
protocol DataLoader {
    @Bridged(returnValue: .resumeAndCancel)  // a data task starts suspended
    func dataTask(
        with url: URL, completionHandler: @escaping @Sendable (Data?, StandInURLResponse?, Error?) -> Void
    ) -> StandInDataTask
}
extension StandInURLSession: DataLoader {}

@BridgedAll
protocol AccountSigningIn {
    func signIn(
        email: String, success: @escaping (StandInAccountSession) -> Void, failure: @escaping (Error) -> Void)
}
extension StandInAccountsSDK: AccountSigningIn {}

/// A Swift 6 view model over the SDKs, holding each as its protocol (also where a test puts a fake).
@MainActor
final class OnboardingModel {
    let geocoder: any GeocodingService
    let notifications: any NotificationPermissions
    let photos: any PhotoPermissions.Type
    let session: any DataLoader
    let accounts: any AccountSigningIn
    var place: String?
    var notificationsAllowed = false
    var photoAccess: StandInAuthorizationStatus = .notDetermined
    var avatar: Data?
    var token: String?

    init(
        geocoder: any GeocodingService, notifications: any NotificationPermissions, photos: any PhotoPermissions.Type,
        session: any DataLoader, accounts: any AccountSigningIn
    ) {
        self.geocoder = geocoder
        self.notifications = notifications
        self.photos = photos
        self.session = session
        self.accounts = accounts
    }

    func locate(_ location: StandInLocation) async throws {
        place = try await geocoder.reverseGeocodeLocation(location).first?.name
    }
    func askForNotifications() async throws {
        notificationsAllowed = try await notifications.requestAuthorization(options: [.alert, .badge])
    }
    func askForPhotos() async throws {
        photoAccess = try await photos.requestAuthorization(for: .readWrite)
    }
    func loadAvatar(from url: URL) async throws {
        let (data, response) = try await session.dataTask(with: url)
        avatar = response.statusCode == 200 ? data : nil
    }
    func signIn(_ email: String) async throws {
        token = try await accounts.signIn(email: email).token
    }
}

/// The SDK objects of one test, and the view model over them.
@MainActor
struct StandInSDKs {
    let geocoder = StandInGeocoder()
    let notifications = StandInNotificationCenter()
    let session = StandInURLSession()
    let accounts = StandInAccountsSDK()

    func model() -> OnboardingModel {
        OnboardingModel(
            geocoder: geocoder, notifications: notifications, photos: StandInPhotoLibrary.self, session: session,
            accounts: accounts)
    }
}

@MainActor
@Suite(.timeLimit(.minutes(1)))
struct SDKsYouDoNotOwnTests {
    struct Offline: Error, Equatable {}

    // MARK: - CLGeocoder

    @Test func geocoder_theModelGetsThePlacemark() async throws {
        try await withLeakTracking { tracker in
            let sdks = StandInSDKs()
            let model = sdks.model()
            tracker.track(model)
            tracker.track(sdks.geocoder)
            let locate = Task { try await model.locate(StandInLocation()) }
            try await sdks.geocoder.geocodes.nextInvocation().complete(with: ["Oslo"])
            try await locate.value
            #expect(model.place == "Oslo")
        }
    }

    @Test func geocoder_droppedHandler_throwsCallbackDropped() async throws {
        let sdks = StandInSDKs()
        let model = sdks.model()
        try await expectDiagnostics([.callbackDropped]) {
            let locate = Task { try await model.locate(StandInLocation()) }
            try await sdks.geocoder.geocodes.nextInvocation().drop()
            await #expect(throws: BridgeError.callbackDropped) { try await locate.value }
        }
    }

    @Test func geocoder_onTheConcreteType_theSDKsOwnAsyncFormIsChosen_throughTheProtocol_Bridges() async throws {
        // Swift prefers a class's own member to a protocol extension's: the SDK's `async` twin.
        let own = try await ownAsyncForm(of: StandInGeocoder())
        #expect(own == ["the SDK's own async form"])
        // Through the protocol, the form @BridgedAll wrote (here: the fake answers).
        let sdks = StandInSDKs()
        let bridged: any GeocodingService = sdks.geocoder
        let task = Task { try await bridged.reverseGeocodeLocation(StandInLocation()).map(\.name) }
        try await sdks.geocoder.geocodes.nextInvocation().complete(with: ["Bergen"])
        #expect(try await task.value == ["Bergen"])
    }

    /// A local SDK object may be sent to the SDK's own nonisolated async method; a main-actor
    /// property could not ("sending 'self.geocoder' risks causing data races").
    nonisolated func ownAsyncForm(of geocoder: sending StandInGeocoder) async throws -> [String] {
        try await geocoder.reverseGeocodeLocation(StandInLocation()).map(\.name)
    }

    // MARK: - UNUserNotificationCenter

    @Test func notifications_granted_deniedIsAValue_anErrorIsThrown() async throws {
        let sdks = StandInSDKs()
        let model = sdks.model()
        let ask = Task { try await model.askForNotifications() }
        let call = try await sdks.notifications.authorizations.nextInvocation()
        #expect(call.request == StandInAuthorizationOptions([.alert, .badge]).rawValue)
        call.complete(with: true)
        try await ask.value
        #expect(model.notificationsAllowed)

        let denied = Task { try await model.askForNotifications() }
        try await sdks.notifications.authorizations.nextInvocation().complete(with: false)
        try await denied.value
        #expect(!model.notificationsAllowed)

        let failed = Task { try await model.askForNotifications() }
        try await sdks.notifications.authorizations.nextInvocation().fail(Offline())
        await #expect(throws: Offline()) { try await failed.value }
    }

    // MARK: - PHPhotoLibrary (a class method)

    @Test func photoLibrary_classMethod_theStatusArrives() async throws {
        let sdks = StandInSDKs()
        let model = sdks.model()
        let ask = Task { try await model.askForPhotos() }
        let call = try await StandInPhotoLibrary.authorizations.nextInvocation()
        #expect(call.request == StandInAccessLevel.readWrite.rawValue)
        call.complete(with: .limited)
        try await ask.value
        #expect(model.photoAccess == .limited)
    }

    // MARK: - URLSession.dataTask(with:completionHandler:)

    @Test func dataTask_resumedOnce_bothValuesReturned() async throws {
        try await withLeakTracking { tracker in
            let sdks = StandInSDKs()
            let model = sdks.model()
            tracker.track(model)
            tracker.track(sdks.session)
            let load = Task { try await model.loadAvatar(from: URL(string: "https://example.com/a.png")!) }
            let call = try await sdks.session.loads.nextInvocation()  // arrives only once the task is resumed
            #expect(call.request.lastPathComponent == "a.png")
            call.complete(with: StandInLoad(data: Data([1, 2]), response: StandInURLResponse(statusCode: 200)))
            try await load.value
            #expect(model.avatar == Data([1, 2]))
        }
    }

    @Test func dataTask_cancellingTheTask_cancelsTheDataTask() async throws {
        let sdks = StandInSDKs()
        let model = sdks.model()
        let load = Task { try await model.loadAvatar(from: URL(string: "https://example.com/b.png")!) }
        let call = try await sdks.session.loads.nextInvocation()
        load.cancel()
        await #expect(throws: CancellationError.self) { try await load.value }
        #expect(call.isCancelled, "the data task's cancel() reached the request")
    }

    @Test func dataTask_neitherDataNorError_throwsMissingValueAndError() async throws {
        let sdks = StandInSDKs()
        let model = sdks.model()
        try await expectDiagnostics([.callbackWithoutValueOrError]) {
            let load = Task { try await model.loadAvatar(from: URL(string: "https://example.com/c.png")!) }
            try await sdks.session.loads.nextInvocation().complete(with: StandInLoad(data: nil, response: nil))
            await #expect(throws: BridgeError.missingValueAndError) { try await load.value }
        }
    }

    @Test func dataTask_theHandleIsResumedOnce_andCancelledOnce() async throws {
        // The generated body resumes the task it gets and cancels it on cancellation.
        let recording = RecordingSession()
        let load = Task { _ = try await recording.dataTask(with: URL(string: "https://example.com/d.png")!) }
        let call = try await recording.inner.loads.nextInvocation()
        #expect(recording.task?.resumeCount == 1)
        load.cancel()
        await #expect(throws: CancellationError.self) { try await load.value }
        #expect(recording.task?.cancelCount == 1)
        #expect(call.isCancelled)
    }

    // MARK: - A success:failure: SDK

    @Test func accounts_successFailurePair_bridgedAsOneResult() async throws {
        try await withLeakTracking { tracker in
            let sdks = StandInSDKs()
            let model = sdks.model()
            tracker.track(model)
            tracker.track(sdks.accounts)
            let signIn = Task { try await model.signIn("ada@example.com") }
            try await sdks.accounts.signIns.nextInvocation().complete(with: "t0k3n")
            try await signIn.value
            #expect(model.token == "t0k3n")

            let failed = Task { try await model.signIn("eve@example.com") }
            try await sdks.accounts.signIns.nextInvocation().fail(Offline())
            await #expect(throws: Offline()) { try await failed.value }
        }
    }
}

/// A `DataLoader` that keeps the data task it hands out, so a test can see what the async form
/// did to it.
final class RecordingSession: DataLoader {
    let inner = StandInURLSession()
    private(set) var task: StandInDataTask?

    func dataTask(
        with url: URL, completionHandler: @escaping @Sendable (Data?, StandInURLResponse?, Error?) -> Void
    ) -> StandInDataTask {
        let task = inner.dataTask(with: url, completionHandler: completionHandler)
        self.task = task
        return task
    }
}
#endif
