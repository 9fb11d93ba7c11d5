import Dispatch

/// The transport of SDK 1.x: a completion handler, called on an arbitrary thread.
public protocol LegacyWeatherTransport: Sendable {
    func get(_ city: String, completion: @escaping @Sendable (Result<Forecast, any Error>) -> Void)
}

/// SDK 1.x, kept here to show what 2.0 replaced: retries by hand with `asyncAfter`, hops to
/// the caller's queue by hand, and offers no way to cancel.
public final class WeatherClientV1: Sendable {
    private let transport: any LegacyWeatherTransport
    public init(transport: any LegacyWeatherTransport) { self.transport = transport }

    // snippet:begin weatherSDK.before
    public func fetchForecast(
        for city: String,
        queue: DispatchQueue = .main,
        completion: @escaping @Sendable (Result<Forecast, any Error>) -> Void
    ) {
        @Sendable func attempt(_ number: Int) {
            transport.get(city) { result in
                if case .failure(WeatherError.temporarilyUnavailable) = result, number < 3 {
                    DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(number)) { attempt(number + 1) }
                } else {
                    queue.async { completion(result) }
                }
            }
        }
        attempt(1)
    }
    // snippet:end weatherSDK.before
}
