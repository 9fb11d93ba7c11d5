// A legacy SDK as apps still ship it: Swift 5 language mode, plain classes that were never made
// `Sendable`, a request handle that is not thread-safe, a manager with a `weak var delegate`.
// The tests' app code (Swift 6) and the snippet check's prelude (.ci/check-snippets.py) both
// build against this file, so every documented pattern meets the same legacy types.
import Dispatch
import Foundation

public struct Forecast: Equatable {
    public let city: String
    public let summary: String
    public init(city: String, summary: String) {
        self.city = city
        self.summary = summary
    }
}

public enum LegacyError: Error, Equatable {
    case cancelled
    case failed(String)
}

/// Tells whether the caller runs on the main queue (where the main actor runs).
public func isOnMainQueue() -> Bool { DispatchQueue.getSpecific(key: mainQueueKey) == 1 }

let mainQueueKey: DispatchSpecificKey<UInt8> = {
    let key = DispatchSpecificKey<UInt8>()
    DispatchQueue.main.setSpecific(key: key, value: 1)
    return key
}()

/// A request in flight: not thread-safe (plain stored properties), cancelled with `cancel()`,
/// which calls the completion back with `LegacyError.cancelled`, as URLSession does.
public final class WeatherRequest {
    public let city: String
    public private(set) var isCancelled = false
    public private(set) var cancelledOnMainQueue = false
    var completion: ((Result<Forecast, Error>) -> Void)?

    init(city: String, completion: @escaping (Result<Forecast, Error>) -> Void) {
        self.city = city
        self.completion = completion
    }

    public func cancel() {
        guard !isCancelled else { return }
        isCancelled = true
        cancelledOnMainQueue = isOnMainQueue()
        finish(.failure(LegacyError.cancelled))
        onCancel?(self)
    }

    /// Called after `cancel()` did its work (tests wait on it).
    public var onCancel: ((WeatherRequest) -> Void)?

    func finish(_ result: Result<Forecast, Error>) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}

/// A client whose requests answer when the test says so (`complete(_:with:)`).
public final class LegacyWeatherClient {
    public private(set) var requests: [WeatherRequest] = []
    /// Called with each new request (tests wait on it).
    public var onRequest: ((WeatherRequest) -> Void)?
    /// Called with each cancelled request.
    public var onCancel: ((WeatherRequest) -> Void)?

    public init() {}

    /// Starts a request; the completion is called once: by `complete(_:with:)` or by `cancel()`.
    @discardableResult
    public func fetchForecast(
        city: String, completion: @escaping (Result<Forecast, Error>) -> Void
    )
        -> WeatherRequest
    {
        let request = WeatherRequest(city: city, completion: completion)
        request.onCancel = { [weak self] in self?.onCancel?($0) }
        requests.append(request)
        onRequest?(request)
        return request
    }

    /// An Objective-C-style `(value?, error?)` handler, answering at once.
    public func currentCity(completion: @escaping (String?, Error?) -> Void) {
        completion("Lisbon", nil)
    }

    public func complete(_ request: WeatherRequest, with summary: String) {
        request.finish(.success(Forecast(city: request.city, summary: summary)))
    }
}

/// A service protocol as Swift 5 SDKs declare them, the seam an app's code depends on so that
/// its tests can swap the implementation: the completion handler is not `@Sendable`.
public protocol LegacyCitySearch: AnyObject {
    func searchCities(matching query: String, completion: @escaping (Result<[String], Error>) -> Void)
}

/// A value the SDK reports many times (a sensor's reading): a struct of plain values that the
/// Swift 5 SDK never marked `Sendable`.
public struct Reading: Equatable {
    public let value: Double
    public let unit: String
    public init(value: Double, unit: String) {
        self.value = value
        self.unit = unit
    }
}

/// A value type the SDK did mark `Sendable`, as SDKs do for plain values (CLLocationCoordinate2D).
public struct Location: Equatable, Sendable {
    public let latitude: Double
    public let longitude: Double
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

public protocol LegacyLocationDelegate: AnyObject {
    func locationManager(_ manager: LegacyLocationManager, didUpdate location: Location)
    func locationManager(_ manager: LegacyLocationManager, didFailWithError error: Error)
}

/// A delegate-based manager: holds its delegate `weak`, like CLLocationManager.
public final class LegacyLocationManager {
    public weak var delegate: LegacyLocationDelegate?
    public private(set) var isRunning = false
    public private(set) var stopCount = 0
    /// Called after `stop()` did its work (tests wait on it).
    public var onStop: (() -> Void)?

    public init() {}

    /// Called after `start()` (tests wait on it).
    public var onStart: (() -> Void)?

    public func start() {
        isRunning = true
        onStart?()
    }

    public func stop() {
        isRunning = false
        stopCount += 1
        onStop?()
    }

    /// Reports a location to the delegate, as the system would.
    public func simulate(_ location: Location) {
        delegate?.locationManager(self, didUpdate: location)
    }

    public func simulateFailure(_ error: Error) {
        delegate?.locationManager(self, didFailWithError: error)
    }
}

public struct User: Equatable {
    public let id: Int
    public let name: String
    public init(id: Int, name: String) {
        self.id = id
        self.name = name
    }
}

/// A user request in flight, as `WeatherRequest`: not thread-safe, cancelled with `cancel()`.
public final class UserRequest {
    public let id: Int
    public private(set) var isCancelled = false
    public private(set) var cancelledOnMainQueue = false
    /// Called after `cancel()` did its work (tests wait on it).
    public var onCancel: ((UserRequest) -> Void)?
    var completion: ((User?, Error?) -> Void)?

    init(id: Int, completion: @escaping (User?, Error?) -> Void) {
        self.id = id
        self.completion = completion
    }

    public func cancel() {
        guard !isCancelled else { return }
        isCancelled = true
        cancelledOnMainQueue = isOnMainQueue()
        finish(nil, LegacyError.cancelled)
        onCancel?(self)
    }

    func finish(_ user: User?, _ error: Error?) {
        let completion = self.completion
        self.completion = nil
        completion?(user, error)
    }
}

/// An Objective-C-style client: `(value?, error?)` completion handlers, a handle to cancel.
public final class LegacyUserClient {
    public private(set) var requests: [UserRequest] = []
    /// Called with each new request (tests wait on it).
    public var onRequest: ((UserRequest) -> Void)?

    public init() {}

    @discardableResult
    public func fetchUser(_ id: Int, completion: @escaping (User?, Error?) -> Void) -> UserRequest {
        let request = UserRequest(id: id, completion: completion)
        requests.append(request)
        onRequest?(request)
        return request
    }

    /// An avatar's bytes, through the same kind of handle.
    @discardableResult
    public func fetchAvatar(for user: User, completion: @escaping (Data?, Error?) -> Void) -> UserRequest {
        let request = UserRequest(id: user.id) { _, error in completion(error == nil ? Data() : nil, error) }
        requests.append(request)
        return request
    }

    public func complete(_ request: UserRequest, with user: User) { request.finish(user, nil) }
}

public enum WeatherError: Error, Equatable {
    case unknownCity
    case cancelled
}

/// A client whose handler has a typed error, `Result<Forecast, WeatherError>`.
public final class WeatherClient {
    public private(set) var requests: [WeatherRequest] = []

    public init() {}

    @discardableResult
    public func forecast(
        for city: String, completion: @escaping (Result<Forecast, WeatherError>) -> Void
    )
        -> WeatherRequest
    {
        let request = WeatherRequest(city: city) { result in
            completion(result.mapError { $0 as? WeatherError ?? .cancelled })
        }
        requests.append(request)
        return request
    }
}
