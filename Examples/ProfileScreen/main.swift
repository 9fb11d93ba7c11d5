// `swift run ProfileScreen`: a Swift 6 @MainActor view model over a legacy (Swift 5, non-Sendable)
// SDK, using withCallback, withCompletion, subscribe and forEach(weak:) with no escape hatches.
import Foundation

if #available(BridgesClock, *) {
    let report = await runProfileScreen()
    let ok = report == ProfileReport(
        userName: "Ada", userIsTheSDKsObject: true,
        title: "Sent", rendered: ["Inbox", "Drafts", "Sent"], history: ["Inbox", "Drafts", "Sent"],
        legacyTitle: "Ada", cancelledTitle: "CancellationError",
        avatarTimedOut: true, avatarCancelledOnMainThread: true
    )
    print(ok ? "ProfileScreen: OK" : "ProfileScreen: FAILED \(report)")
    exit(ok ? 0 : 1)
} else {
    print("ProfileScreen runs on a TestClock: it needs macOS 13 / iOS 16 or later")
    exit(1)
}
