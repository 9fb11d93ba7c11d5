#if Macros
import BridgesMacros
import Foundation
import Testing

// The macros' examples in MIGRATION.md and BridgesMacros' doc comments, compiled here with the
// Macros trait: each doc block is a region of this file, line for line (.ci/check-snippets.py,
// context `compiled`). The types around the regions stand in for an SDK's own.

struct User: Sendable { let id: Int }
struct APIError: Error {}
final class Request {
    func cancel() {}
}
final class UserTransport {
    func get(_ id: Int, completion: @escaping (Result<User, APIError>) -> Void) -> Request {
        completion(.success(User(id: id)))
        return Request()
    }
}

// snippet:begin bridged
final class UserClient {
    let transport = UserTransport()

    @Bridged
    func fetchUser(id: Int, completion: @escaping (Result<User, APIError>) -> Void) -> Request {
        transport.get(id, completion: completion)
    }
}
// adds, beside it:
// func fetchUser(id: Int) async throws(CallbackFailure<APIError>) -> User
// snippet:end bridged

final class UserBackend: Sendable {
    func user(id: Int) async throws -> User { User(id: id) }
}

// snippet:begin bridgedCompletion
final class UserStore: Sendable {
    let backend = UserBackend()

    @BridgedCompletion(on: .mainActor)
    func load(id: Int) async throws -> User {
        try await backend.user(id: id)
    }
}
// adds, beside it:
// @discardableResult
// func load(id: Int, completion: @escaping @MainActor (Result<User, any Error>) -> Void) -> Cancellation
// snippet:end bridgedCompletion

struct Forecast: Sendable { let city: String }
struct WeatherError: Error {}
final class WeatherRequest {
    func cancel() {}
}
final class WeatherTransport {
    func get(_ city: String, completion: @escaping (Result<Forecast, WeatherError>) -> Void) -> WeatherRequest {
        completion(.success(Forecast(city: city)))
        return WeatherRequest()
    }
}

// snippet:begin weatherClient
final class WeatherClient {
    let transport = WeatherTransport()

    @Bridged(timeout: .after(.seconds(30)))  // timeout: optional
    @discardableResult
    func forecast(for city: String, completion: @escaping (Result<Forecast, WeatherError>) -> Void) -> WeatherRequest {
        transport.get(city, completion: completion)
    }
}

// Swift 6, in a @MainActor view model:
@MainActor final class ForecastModel {
    let client = WeatherClient()
    var forecast: Forecast?
    var problem: String?

    func refresh() async {
        do {
            forecast = try await client.forecast(for: "Oslo")
        } catch {
            switch error {  // CallbackFailure<WeatherError>: no cast, no default
            case .failure(let error): problem = "\(error)"  // a WeatherError
            case .cancelled: problem = nil
            case .bridge(let error): problem = "\(error)"  // timedOut, callbackDropped
            }
        }
    }
}
// snippet:end weatherClient

public struct Account: Identifiable, Sendable { public let id: Int }

// snippet:begin bridgedAll
@BridgedAll
public protocol AccountService {
    func load(completion: @escaping (Result<[Account], Error>) -> Void) -> Cancellation
    func remove(_ id: Account.ID, completion: @escaping (Error?) -> Void)
    // Without @NotBridged: "warning: @BridgedAll skipped 'download(_:completion:)': … its
    // completion handler takes 3 values …", with what to write by hand.
    @NotBridged
    func download(_ id: Account.ID, completion: @escaping (Data?, String?, Error?) -> Void)
}
// adds: public func load() async throws -> [Account], public func remove(_ id: Account.ID) async throws
// snippet:end bridgedAll

/// The regions above compile; these check that what they say they add is there.
@Suite struct DocSnippetsTests {
    @Test func bridged_addsTheTypedAsyncForm() async throws {
        let user = try await UserClient().fetchUser(id: 7)
        #expect(user.id == 7)
    }

    @Test @MainActor func bridgedCompletion_addsTheMainActorHandlerForm() async throws {
        let user = try await withCheckedThrowingContinuation { continuation in
            UserStore().load(id: 3) { continuation.resume(with: $0) }
        }
        #expect(user.id == 3)
    }

    @Test @MainActor func weatherClient_theViewModelGetsTheForecast() async {
        let model = ForecastModel()
        await model.refresh()
        #expect(model.forecast?.city == "Oslo")
        #expect(model.problem == nil)
    }

    @Test func bridgedAll_addsTheAsyncForms() async throws {
        final class Accounts: AccountService {
            func load(completion: @escaping (Result<[Account], Error>) -> Void) -> Cancellation {
                completion(.success([Account(id: 1)]))
                return Cancellation {}
            }
            func remove(_ id: Account.ID, completion: @escaping (Error?) -> Void) { completion(nil) }
            func download(_ id: Account.ID, completion: @escaping (Data?, String?, Error?) -> Void) {}
        }
        let accounts = Accounts()
        #expect(try await accounts.load().map(\.id) == [1])
        try await accounts.remove(1)
    }
}
#endif
