import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

public struct Movie: Codable, Equatable, Sendable {
    public let id: Int
    public let title: String
}

public struct MoviePage: Codable, Equatable, Sendable {
    public let page: Int
    public let results: [Movie]
}

/// A TMDb-style client as written years ago: `URLSession` + `JSONDecoder` + a completion handler,
/// called on an arbitrary queue, returning the task so callers can cancel it (if they remember).
public final class LegacyMovieService: Sendable {
    public enum Failure: Error, Equatable { case badStatus(Int), noData }

    private let session: URLSession
    private let baseURL: URL

    public init(baseURL: URL, session: URLSession = URLSession(configuration: .ephemeral)) {
        self.baseURL = baseURL
        self.session = session
    }

    // snippet:begin movieStore.before
    @discardableResult
    public func fetchMovies(page: Int, completion: @escaping @Sendable (Result<MoviePage, any Error>) -> Void) -> URLSessionDataTask {
        let url = URL(string: "\(baseURL.absoluteString)/movies?page=\(page)")!
        let task = session.dataTask(with: url) { data, response, error in
            if let error { return completion(.failure(error)) }
            if let status = (response as? HTTPURLResponse)?.statusCode, status != 200 {
                return completion(.failure(Failure.badStatus(status)))
            }
            guard let data else { return completion(.failure(Failure.noData)) }
            completion(Result { try JSONDecoder().decode(MoviePage.self, from: data) })
        }
        task.resume()
        return task
    }
    // snippet:end movieStore.before

    public func invalidate() { session.invalidateAndCancel() }
}
