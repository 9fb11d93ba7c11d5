import Foundation

// `swift run --traits OpenCombine SearchScreen`: search-as-you-type in Combine and in async,
// one scenario, the same results.
if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) {
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
