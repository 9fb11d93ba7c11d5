import Bridges
import ExampleTesting
import Foundation
import ProfileLegacyKit

/// What the screen did, for `main.swift` and the tests.
struct ProfileReport: Sendable, Equatable {
    var userName = ""
    var userIsTheSDKsObject = false
    var title = ""
    var rendered: [String] = []
    var history: [String] = []
    var legacyTitle = ""
    var cancelledTitle = ""
    var avatarTimedOut = false
    var avatarCancelledOnMainThread = false
}

@available(BridgesClock, *)  // TestClock
@MainActor
func runProfileScreen(log: (String) -> Void = { print($0) }) async -> ProfileReport {
    var report = ProfileReport()
    let model = ProfileViewModel()

    // withCallback with a non-Sendable User.
    if let user = try? await model.loadUser(42) {
        report.userName = user.name
        report.userIsTheSDKsObject = user === model.legacyClient.lastUser
    }
    log("loadUser: \(report.userName)")

    // subscribe(on: .mainActor) and forEach(weak:) on the push feed.
    await model.play(["Inbox", "Drafts", "Sent"])
    report.title = model.title
    report.rendered = model.rendered
    report.history = model.history
    log("feed: title \(report.title), history \(report.history)")

    // withCompletion(on: .mainActor, …) with a @MainActor completion, then a cancelled one.
    report.legacyTitle = await withCheckedContinuation { continuation in
        model.loadTitle { result in continuation.resume(returning: (try? result.get()) ?? "error") }.store(in: model.bag)
    }
    report.cancelledTitle = await withCheckedContinuation { continuation in
        let token = model.loadTitle { result in
            continuation.resume(returning: result.error is CancellationError ? "CancellationError" : "\(result)")
        }
        token.cancel()
    }
    log("loadTitle: \(report.legacyTitle), cancelled: \(report.cancelledTitle)")

    // A timeout on virtual time: the hanging avatar request is cancelled on the main thread.
    let clock = TestClock()
    async let avatar = model.loadAvatar(timeout: .after(.seconds(5), on: clock))
    await clock.waitForSleepers(1)
    await clock.advance(by: .seconds(5))
    do {
        _ = try await avatar
    } catch {
        report.avatarTimedOut = error as? BridgeError == .timedOut
    }
    await Task { @MainActor in }.value  // the token's hop to the main actor has run
    report.avatarCancelledOnMainThread = model.legacyClient.requests.first?.cancelledOnMainThread ?? false
    log("avatar: timed out \(report.avatarTimedOut), cancelled on main \(report.avatarCancelledOnMainThread)")
    return report
}

extension Result {
    var error: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
