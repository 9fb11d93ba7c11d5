import Testing

@testable import ProfileScreen

@Suite("Example: ProfileScreen", .timeLimit(.minutes(3)))
@MainActor
struct ProfileScreenTests {
    @Test func swift6ViewModel_overANonSendableLegacySDK_usesEveryBridge() async {
        let report = await runProfileScreen(log: { _ in })
        #expect(report.userName == "Ada")
        #expect(report.userIsTheSDKsObject)
        #expect(report.title == "Sent")
        #expect(report.rendered == ["Inbox", "Drafts", "Sent"])
        #expect(report.history == ["Inbox", "Drafts", "Sent"])
        #expect(report.legacyTitle == "Ada")
        #expect(report.cancelledTitle == "CancellationError")
        #expect(report.avatarTimedOut)
        #expect(report.avatarCancelledOnMainThread)
    }
}
