import Foundation

// `swift run --traits OpenCombine SearchScreen`: search-as-you-type in Combine and in async,
// one scenario, the same results.
let report = await runSearchScreen()
var ok = report.async == .expected
#if canImport(Combine) || OpenCombine
ok = ok && report.combine == .expected
#endif
print(ok ? "SearchScreen: OK" : "SearchScreen: FAILED \(report)")
exit(ok ? 0 : 1)
