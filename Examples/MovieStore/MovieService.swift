import Bridges
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The async face of the legacy client. Callers `try await` it; cancelling their task cancels
/// the `URLSessionDataTask` under it, and the legacy implementation stays untouched until the
/// day it is rewritten.
extension LegacyMovieService {
    // snippet:begin movieStore.after
    public func movies(page: Int) async throws -> MoviePage {
        try await withCallback { done in
            let task = fetchMovies(page: page, completion: done)
            return Cancellation { task.cancel() }
        }
    }
    // snippet:end movieStore.after
}
