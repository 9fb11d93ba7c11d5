import Bridges
import ExampleSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a run of the example observed: checked by `main` and by ExamplesTests.
public struct MovieStoreReport: Sendable {
    public var firstPage: MoviePage
    public var slowRequestCancelled: Bool
    public var slowTaskState: URLSessionTask.State?
    public var lateErrorCode: Int?
}

/// Serves two pages of movies on 127.0.0.1 (page 2 never answers), loads page 1 with
/// `try await`, then starts page 2 and cancels it while it is in flight.
public func runMovieStore(log: @Sendable (String) -> Void = { print($0) }) async throws -> MovieStoreReport {
    let page1 = #"{"page":1,"results":[{"id":550,"title":"Fight Club"},{"id":13,"title":"Forrest Gump"}]}"#
    let slowRequestArrived = ExampleSignal()
    let server = try LoopbackHTTPServer(
        routes: ["/movies?page=1": .body(page1), "/movies?page=2": .hang],
        onHang: { _ in slowRequestArrived.open() }
    )
    defer { server.stop() }
    let service = LegacyMovieService(baseURL: server.url(""))
    defer { service.invalidate() }

    let first = try await service.movies(page: 1)
    log("page 1: \(first.results.map(\.title).joined(separator: ", "))")

    // Start page 2, then cancel it while the server holds the request.
    let dataTask = ExampleBox<URLSessionDataTask?>(nil)
    let lateError = ExampleBox<Int?>(nil)
    let lateArrived = ExampleSignal()
    let slow = Task {
        try await withCallback(onLateResult: { (result: Result<MoviePage, any Error>) in
            if case .failure(let error) = result { lateError.value = (error as NSError).code }
            lateArrived.open()
        }) { done in
            let task = service.fetchMovies(page: 2, completion: done)
            dataTask.value = task
            return Cancellation { task.cancel() }
        }
    }
    await slowRequestArrived.wait()
    slow.cancel()
    let outcome = await slow.result
    await lateArrived.wait()
    let cancelled: Bool = if case .failure(let error) = outcome { error is CancellationError } else { false }
    log("page 2 cancelled while in flight: \(cancelled); URLSession task state: \(String(describing: dataTask.value?.state)); late error code: \(String(describing: lateError.value))")
    return MovieStoreReport(
        firstPage: first, slowRequestCancelled: cancelled, slowTaskState: dataTask.value?.state, lateErrorCode: lateError.value
    )
}
