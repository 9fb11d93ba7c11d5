import Foundation
import Testing

@testable import MovieStore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Example: MovieStore", .timeLimit(.minutes(3)))
struct MovieStoreTests {
    @Test func loadsPageOne_andCancellationReachesTheInFlightRequest() async throws {
        let report = try await runMovieStore(log: { _ in })
        #expect(report.firstPage.results.map(\.id) == [550, 13])
        #expect(report.slowRequestCancelled)
        #expect(report.lateErrorCode == NSURLErrorCancelled)
        #expect(report.slowTaskState == .canceling || report.slowTaskState == .completed)
    }
}
