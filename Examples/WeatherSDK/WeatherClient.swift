import Bridges
import Dispatch

/// The transport of SDK 2.0: async.
public protocol WeatherTransport: Sendable {
    func forecast(for city: String) async throws -> Forecast
}

/// SDK 2.0: implemented in async/await, with time on an injected `Clock` (tests pass a
/// `TestClock`). Its 1.x completion-handler API stays, as thin adapters over the async one, so
/// apps upgrade without touching their call sites, and gain cancellation.
@available(BridgesClock, *)  // Clock, Duration
public final class WeatherClient: Sendable {
    private let transport: any WeatherTransport
    private let sleep: @Sendable (Duration) async throws -> Void

    public init<C: Clock<Duration>>(transport: any WeatherTransport, clock: C) {
        self.transport = transport
        self.sleep = { try await clock.sleep(for: $0) }
    }

    /// The forecast for `city`. Retries up to twice when the backend is temporarily
    /// unavailable, waiting 1 s and then 2 s on the client's clock. Cancellable.
    public func forecast(for city: String) async throws -> Forecast {
        var attempt = 1
        while true {
            do {
                return try await transport.forecast(for: city)
            } catch WeatherError.temporarilyUnavailable where attempt < 3 {
                try await sleep(.seconds(attempt))
                attempt += 1
            }
        }
    }

    /// A fresh forecast now and then every `interval`, until the consumer stops. Only the
    /// newest forecast waits for a slow consumer (`.latest`).
    public func updates(for city: String, every interval: Duration) -> CallbackStream<Forecast, any Error> {
        CallbackStream(buffering: .latest) { [self] sink in
            let polling = Task {
                do {
                    while true {
                        sink.yield(try await forecast(for: city))
                        try await sleep(interval)
                    }
                } catch is CancellationError {
                    sink.finish()
                } catch {
                    sink.finish(throwing: error)
                }
            }
            return polling.cancellation
        }
    }

    // MARK: - The 1.x API, kept for apps that have not migrated

    // snippet:begin weatherSDK.after
    /// Calls `completion` once on `queue` with the forecast or the error; since 2.0 it returns
    /// a token that cancels the request (then `completion` gets `CancellationError`).
    @discardableResult
    public func fetchForecast(
        for city: String,
        queue: DispatchQueue = .main,
        completion: @escaping @Sendable (Result<Forecast, any Error>) -> Void
    ) -> Cancellation {
        withCompletion(on: .queue(queue), completion) { try await self.forecast(for: city) }
    }
    // snippet:end weatherSDK.after

    /// Calls `handler` on `queue` with a forecast now and every `interval`, until the returned
    /// token is cancelled (keep it in a `CancellationBag`).
    public func observeForecast(
        for city: String,
        every interval: Duration,
        queue: DispatchQueue = .main,
        handler: @escaping @Sendable (Forecast) -> Void
    ) -> Cancellation {
        updates(for: city, every: interval).subscribe(on: .queue(queue), onElement: handler)
    }
}
