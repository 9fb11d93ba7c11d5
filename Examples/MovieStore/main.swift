import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// `swift run MovieStore`: a completion-handler movie client migrated to async, offline.
let report = try await runMovieStore()
let ok = report.firstPage.results.count == 2
    && report.slowRequestCancelled
    && report.lateErrorCode == NSURLErrorCancelled
print(ok ? "MovieStore: OK" : "MovieStore: FAILED \(report)")
exit(ok ? 0 : 1)
