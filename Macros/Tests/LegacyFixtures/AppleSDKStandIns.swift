#if Macros
import BridgesTesting
import Foundation

// Stand-ins for SDKs an app does not own, declared as Swift shows them in Xcode's generated
// interface (Swift 5, non-Sendable classes, `@Sendable` handlers, typealiased handler types, and
// the `async` twin Apple's importer adds). Nobody can put `@Bridged` on these declarations: the
// app restates them in a `@BridgedAll` protocol that the SDK type conforms to (see
// SDKsYouDoNotOwnTests.swift). Each calls back on `SDKQueue`, as the real ones call back on
// queues of their own.

// MARK: - CLGeocoder.reverseGeocodeLocation(_:completionHandler:)

public final class StandInLocation {
    public init() {}
}

public final class StandInPlacemark {
    public let name: String
    public init(name: String) { self.name = name }
}

/// CoreLocation spells the handler through a typealias.
public typealias StandInGeocodeCompletionHandler = ([StandInPlacemark]?, Error?) -> Void

open class StandInGeocoder {
    public let geocodes = FakeCompletionAPI<Void, [String]>()
    public private(set) var cancelGeocodeCount = 0
    public init() {}

    open func reverseGeocodeLocation(
        _ location: StandInLocation, completionHandler: @escaping @Sendable StandInGeocodeCompletionHandler
    ) {
        _ = geocodes.call { result in
            SDKQueue.deliver {
                switch result {
                case .success(let names): completionHandler(names.map(StandInPlacemark.init(name:)), nil)
                case .failure(let error): completionHandler(nil, error)
                }
            }
        }
    }

    /// What Apple's importer adds beside the completion-handler method.
    open func reverseGeocodeLocation(_ location: StandInLocation) async throws -> [StandInPlacemark] {
        [StandInPlacemark(name: "the SDK's own async form")]
    }

    open func cancelGeocode() { cancelGeocodeCount += 1 }
}

// MARK: - UNUserNotificationCenter.requestAuthorization(options:completionHandler:)

public struct StandInAuthorizationOptions: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let alert = StandInAuthorizationOptions(rawValue: 1)
    public static let badge = StandInAuthorizationOptions(rawValue: 2)
}

open class StandInNotificationCenter {
    public let authorizations = FakeCompletionAPI<Int, Bool>()
    public init() {}

    open func requestAuthorization(
        options: StandInAuthorizationOptions = [], completionHandler: @escaping @Sendable (Bool, Error?) -> Void
    ) {
        _ = authorizations.call(options.rawValue) { result in
            SDKQueue.deliver {
                switch result {
                case .success(let granted): completionHandler(granted, nil)
                case .failure(let error): completionHandler(false, error)
                }
            }
        }
    }

    open func requestAuthorization(options: StandInAuthorizationOptions = []) async throws -> Bool { false }
}

// MARK: - PHPhotoLibrary.requestAuthorization(for:handler:)

public enum StandInAccessLevel: Int, Sendable {
    case addOnly, readWrite
}

public enum StandInAuthorizationStatus: Int, Sendable {
    case notDetermined, restricted, denied, authorized, limited
}

open class StandInPhotoLibrary {
    public static let authorizations = FakeCompletionAPI<Int, StandInAuthorizationStatus>()

    open class func requestAuthorization(
        for accessLevel: StandInAccessLevel, handler: @escaping @Sendable (StandInAuthorizationStatus) -> Void
    ) {
        _ = authorizations.call(accessLevel.rawValue) { result in
            SDKQueue.deliver { handler((try? result.get()) ?? .denied) }
        }
    }

    open class func requestAuthorization(for accessLevel: StandInAccessLevel) async -> StandInAuthorizationStatus {
        .notDetermined
    }
}

// MARK: - URLSession.dataTask(with:completionHandler:)

public final class StandInURLResponse {
    public let statusCode: Int
    public init(statusCode: Int) { self.statusCode = statusCode }
}

/// Like `URLSessionDataTask`: nothing starts until `resume()`.
open class StandInDataTask {
    public private(set) var resumeCount = 0
    public private(set) var cancelCount = 0
    private let start: () -> Cancellation
    private var running: Cancellation?

    init(start: @escaping () -> Cancellation) { self.start = start }

    open func resume() {
        resumeCount += 1
        if running == nil { running = start() }
    }

    open func cancel() {
        cancelCount += 1
        running?.cancel()
    }
}

/// What the data fake completes with: the two values the handler passes.
public struct StandInLoad {
    public var data: Data?
    public var response: StandInURLResponse?
    public init(data: Data?, response: StandInURLResponse?) {
        self.data = data
        self.response = response
    }
}

open class StandInURLSession {
    public let loads = FakeCompletionAPI<URL, StandInLoad>()
    public init() {}

    open func dataTask(
        with url: URL, completionHandler: @escaping @Sendable (Data?, StandInURLResponse?, Error?) -> Void
    ) -> StandInDataTask {
        StandInDataTask { [loads] in
            loads.call(url) { result in
                SDKQueue.deliver {
                    switch result {
                    case .success(let load): completionHandler(load.data, load.response, nil)
                    case .failure(let error): completionHandler(nil, nil, error)
                    }
                }
            }
        }
    }
}

// MARK: - A third-party SDK with success:failure: closures

public final class StandInAccountSession {
    public let token: String
    public init(token: String) { self.token = token }
}

open class StandInAccountsSDK {
    public let signIns = FakeCompletionAPI<String, String>()
    public init() {}

    open func signIn(
        email: String, success: @escaping (StandInAccountSession) -> Void, failure: @escaping (Error) -> Void
    ) {
        _ = signIns.call(email) { result in
            SDKQueue.deliver {
                switch result {
                case .success(let token): success(StandInAccountSession(token: token))
                case .failure(let error): failure(error)
                }
            }
        }
    }
}
#endif
