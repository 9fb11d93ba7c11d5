import Foundation

// `swift run --traits OpenCombine SearchScreen`: search-as-you-type in Combine and in async,
// one scenario, the same results.
if #available(BridgesTypedSequence, *) {
    let report = await runSearchScreen()
    var ok = report.async == .expected
    #if canImport(Combine) || OpenCombine
    ok = ok && report.combine == .expected
    #endif
    print(ok ? "SearchScreen: OK" : "SearchScreen: FAILED \(report)")
    exit(ok ? 0 : 1)
} else {
    print("SearchScreen uses debounce and collectLatest: it needs macOS 15 / iOS 18 or later")
    exit(1)
}
