import Foundation

// `swift run --traits OpenCombine AccountsScreen`: a facade with state as a publisher, a
// presenter consuming it with `for await` through a weak-owner task.
#if canImport(Combine) || OpenCombine
if #available(BridgesClock, *) {
    let report = try await runAccountsScreen()
    let ok = report.shownAfterLoad == [[], [checking, savings]]
        && report.deleteRequest == savings.id
        && report.shownAfterDelete == [[], [checking, savings], [checking]]
        && report.errorsAfterTimeout.count == 1 && report.timedOutRequestCancelled
        && report.presenterReleased && report.observersAfterRelease == 0
        && !report.leakyPresenterReleased && report.observersWhileLeaking == 1 && report.leakyReleasedAfterStop
    print(ok ? "AccountsScreen: OK" : "AccountsScreen: FAILED \(report)")
    exit(ok ? 0 : 1)
} else {
    print("AccountsScreen runs on a TestClock: it needs macOS 13 / iOS 16 or later")
    exit(1)
}
#else
print("AccountsScreen needs Combine: on Linux run `swift run --traits OpenCombine AccountsScreen`")
#endif
