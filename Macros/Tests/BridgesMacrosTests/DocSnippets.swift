#if Macros
import BridgesMacros
import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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

// Stand-ins for CoreLocation and UserNotifications, declared as Xcode's generated interface
// shows them (Linux has neither; URLSession below is Foundation's own).
final class CLLocation {}
final class CLPlacemark {
    let name: String? = "Oslo"
}
typealias CLGeocodeCompletionHandler = @Sendable ([CLPlacemark]?, (any Error)?) -> Void
class CLGeocoder {
    func reverseGeocodeLocation(_ location: CLLocation, completionHandler: @escaping CLGeocodeCompletionHandler) {
        completionHandler([CLPlacemark()], nil)
    }
}
struct UNAuthorizationOptions: OptionSet, Sendable {
    let rawValue: Int
    static let alert = UNAuthorizationOptions(rawValue: 1 << 2)
}
class UNUserNotificationCenter {
    static func current() -> UNUserNotificationCenter { UNUserNotificationCenter() }
    func requestAuthorization(
        options: UNAuthorizationOptions = [], completionHandler: @escaping @Sendable (Bool, (any Error)?) -> Void
    ) {
        completionHandler(options.contains(.alert), nil)
    }
}

// snippet:begin sdkProtocols
@BridgedAll
protocol Geocoding {
    func reverseGeocodeLocation(
        _ location: CLLocation, completionHandler: @escaping @Sendable ([CLPlacemark]?, (any Error)?) -> Void)
}
extension CLGeocoder: Geocoding {}

@BridgedAll
protocol NotificationAuthorizing {
    func requestAuthorization(
        options: UNAuthorizationOptions, completionHandler: @escaping @Sendable (Bool, (any Error)?) -> Void)
}
extension UNUserNotificationCenter: NotificationAuthorizing {}

@BridgedAll
protocol DataLoading {
    @Bridged(returnValue: .resumeAndCancel)  // a data task starts suspended
    func dataTask(
        with url: URL, completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDataTask
}
extension URLSession: DataLoading {}

// Swift 6: hold each SDK object as its protocol, where a test also puts its fake.
@MainActor final class PlaceModel {
    let geocoder: any Geocoding = CLGeocoder()
    let notifications: any NotificationAuthorizing = UNUserNotificationCenter.current()
    let session: any DataLoading = URLSession.shared
    var place: String?
    var alertsAllowed = false

    func locate(_ location: CLLocation) async throws {
        place = try await geocoder.reverseGeocodeLocation(location).first?.name
        alertsAllowed = try await notifications.requestAuthorization(options: [.alert])
    }

    func image(at url: URL) async throws -> Data {
        try await session.dataTask(with: url).0
    }
}
// snippet:end sdkProtocols

struct Session: Sendable { let user: String }

// snippet:begin severalClosures
final class Downloads {
    @Bridged(completion: "completion")  // the other closures are passed on, @Sendable
    func download(_ url: URL, completion: @escaping (URL?, Error?) -> Void, progress: @escaping (Double) -> Void) {
        progress(1)
        completion(url, nil)
    }

    @Bridged  // a success/failure pair: one result
    func signIn(user: String, success: @escaping (Session) -> Void, failure: @escaping (Error) -> Void) {
        success(Session(user: user))
    }
}
// adds, beside them:
// func download(_ url: URL, progress: @escaping @Sendable (Double) -> Void) async throws -> URL
// func signIn(user: String) async throws -> Session
// snippet:end severalClosures

// snippet:begin timeoutBeforeClock
final class OldWeatherClient {  // an SDK that deploys to iOS 13: no Clock
    let transport = WeatherTransport()

    @Bridged(timeout: .custom("30 seconds") { try await Task.sleep(nanoseconds: 30_000_000_000) })
    func forecast(for city: String, completion: @escaping (Result<Forecast, WeatherError>) -> Void) -> WeatherRequest {
        transport.get(city, completion: completion)
    }
}
// snippet:end timeoutBeforeClock

// snippet:begin bridgedAll
@BridgedAll
public protocol AccountService {
    func load(completion: @escaping (Result<[Account], Error>) -> Void) -> Cancellation
    func remove(_ id: Account.ID, completion: @escaping (Error?) -> Void)
    func download(_ id: Account.ID, completion: @escaping (Data?, String?, Error?) -> Void)
    // Without @NotBridged: "warning: @BridgedAll skipped 'watch(_:onChange:onError:)': … takes
    // 2 closures …", with the choice to make.
    @NotBridged
    func watch(_ id: Account.ID, onChange: @escaping (Account) -> Void, onError: @escaping (Error) -> Void)
}
// adds: public func load() async throws -> [Account], public func remove(_ id: Account.ID) async throws,
// public func download(_ id: Account.ID) async throws -> (Data, String)
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
            func download(_ id: Account.ID, completion: @escaping (Data?, String?, Error?) -> Void) {
                completion(Data([1]), "text/plain", nil)
            }
            func watch(_ id: Account.ID, onChange: @escaping (Account) -> Void, onError: @escaping (Error) -> Void) {}
        }
        let accounts = Accounts()
        #expect(try await accounts.load().map(\.id) == [1])
        try await accounts.remove(1)
        let (data, type) = try await accounts.download(1)
        #expect(data == Data([1]) && type == "text/plain")
    }

    @Test @MainActor func sdkProtocols_theModelGetsWhatTheSDKsPassed() async throws {
        let model = PlaceModel()
        try await model.locate(CLLocation())
        #expect(model.place == "Oslo")
        #expect(model.alertsAllowed)
    }

    @Test @MainActor func severalClosures_progressPassedOn_pairBridgedAsOneResult() async throws {
        let downloads = Downloads()
        let (progress, reports) = AsyncStream.makeStream(of: Double.self)
        let file = try await downloads.download(URL(string: "https://example.com/f")!, progress: { reports.yield($0) })
        reports.finish()
        #expect(file.lastPathComponent == "f")
        var seen: [Double] = []
        for await value in progress { seen.append(value) }
        #expect(seen == [1])
        #expect(try await downloads.signIn(user: "ada").user == "ada")
    }

    @Test func timeoutBeforeClock_theForecastArrives() async throws {
        #expect(try await OldWeatherClient().forecast(for: "Oslo").city == "Oslo")
    }
}
#endif
