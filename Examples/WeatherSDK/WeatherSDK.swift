import Bridges
import ExampleTesting
import Dispatch
import ExampleSupport

/// The 2.0 transport in this example: a controllable fake completion API, bridged with
/// `withCallback` (cancelling the awaiting task cancels the fake call).
struct FakeTransport: WeatherTransport {
    let api: FakeCompletionAPI<String, Forecast>
    func forecast(for city: String) async throws -> Forecast {
        try await withCallback { done in api.call(city, completion: done) }
    }
}

/// The 1.x transport: answers at once, on another thread.
struct InstantLegacyTransport: LegacyWeatherTransport {
    func get(_ city: String, completion: @escaping @Sendable (Result<Forecast, any Error>) -> Void) {
        DispatchQueue.global().async { completion(.success(Forecast(city: city, celsius: 4))) }
    }
}

/// What a run of the example observed: checked by `main` and by ExamplesTests.
@available(BridgesClock, *)  // Duration
public struct WeatherSDKReport: Sendable {
    public var v1Result: Forecast?
    /// async caller: first attempt failed (temporarily unavailable), retried after 1 s.
    public var retried: Forecast?
    public var attempts: Int
    public var sleptBeforeRetry: Duration
    /// 1.x caller on its own queue.
    public var legacyResult: Forecast?
    public var legacyOnCallerQueue: Bool
    /// 1.x caller cancelling: what its completion received, how often, and whether the
    /// transport call was cancelled.
    public var cancelledWith: String?
    public var cancelledCompletions: Int
    public var cancellationReachedTransport: Bool
    /// 1.x observer: forecasts received at t = 0 and t = 10 min, then cancelled.
    public var observed: [Forecast]
    public var pollingStoppedAfterCancel: Bool
}

@available(BridgesClock, *)  // TestClock
public func runWeatherSDK(log: @Sendable (String) -> Void = { print($0) }) async throws -> WeatherSDKReport {
    let api = FakeCompletionAPI<String, Forecast>()
    let clock = TestClock()
    let client = WeatherClient(transport: FakeTransport(api: api), clock: clock)
    let callerQueue = DispatchQueue(label: "app.weather-widget")
    let onCallerQueue = DispatchSpecificKey<Bool>()
    callerQueue.setSpecific(key: onCallerQueue, value: true)

    // 0. SDK 1.x, for comparison.
    let v1 = ExampleBox<Forecast?>(nil), v1Done = ExampleSignal()
    WeatherClientV1(transport: InstantLegacyTransport()).fetchForecast(for: "Bergen", queue: callerQueue) { v1.value = try? $0.get(); v1Done.open() }
    await v1Done.wait()

    // 1. async/await with a retry on virtual time.
    let oslo = Forecast(city: "Oslo", celsius: -3)
    let request = Task { try await client.forecast(for: "Oslo") }
    try await api.nextInvocation().fail(WeatherError.temporarilyUnavailable)
    await clock.waitForSleepers(1)
    let sleptUntil = clock.pendingSleepers.first?.offset ?? .zero
    await clock.advance(by: .seconds(1))
    try await api.nextInvocation().complete(with: oslo)
    let retried = try await request.value
    log("async: \(retried) after \(api.invocationCount) attempts, waited \(sleptUntil) of virtual time")

    // 2. A 1.x caller: same signature as before, answer on its queue.
    let legacy = ExampleBox<(Forecast?, Bool)>((nil, false)), legacyDone = ExampleSignal()
    client.fetchForecast(for: "Bergen", queue: callerQueue) { result in
        legacy.value = (try? result.get(), DispatchQueue.getSpecific(key: onCallerQueue) == true)
        legacyDone.open()
    }
    try await api.nextInvocation().complete(with: Forecast(city: "Bergen", celsius: 6))
    await legacyDone.wait()
    log("1.x caller: \(legacy.value.0.map { "\($0)" } ?? "nil"), on its queue: \(legacy.value.1)")

    // 3. A 1.x caller that gives up: new in 2.0, the token cancels the request.
    let cancelled = ExampleBox<[String]>([]), cancelledDone = ExampleSignal()
    let token = client.fetchForecast(for: "Tromsø", queue: callerQueue) { result in
        if case .failure(let error) = result { cancelled.value.append("\(type(of: error))") }
        cancelledDone.open()
    }
    let call = try await api.nextInvocation()
    token.cancel()
    await cancelledDone.wait()
    let reached = await call.waitForCancellation()
    callerQueue.sync {}                                   // let any (wrong) second delivery land
    log("1.x caller cancelled: completion got \(cancelled.value); transport call cancelled: \(reached)")

    // 4. A 1.x observer: polling every 10 minutes, stopped by its token. Inside
    //    `withSerialTasks`, so that after the cancel `runUntilIdle()` lets the subscription's
    //    task notice it and tear the polling down.
    let (observed, stopped) = try await withSerialTasks {
        let received = AsyncStream.makeStream(of: Forecast.self)
        let observation = client.observeForecast(for: "Oslo", every: .seconds(600), queue: callerQueue) { received.continuation.yield($0) }
        var forecasts = received.stream.makeAsyncIterator()
        var observed: [Forecast] = []
        try await api.nextInvocation().complete(with: Forecast(city: "Oslo", celsius: -3))
        if let first = await forecasts.next() { observed.append(first) }
        await clock.advance(by: .seconds(600))
        try await api.nextInvocation().complete(with: Forecast(city: "Oslo", celsius: -1))
        if let second = await forecasts.next() { observed.append(second) }
        observation.cancel()
        callerQueue.sync {}                                // the delivery has handed control back
        await runUntilIdle()
        return (observed, clock.pendingSleepers.isEmpty && api.invocationCount == 6)   // 2 + 1 + 1 + 2: no third poll
    }
    log("1.x observer: \(observed), polling stopped after cancel: \(stopped)")

    return WeatherSDKReport(
        v1Result: v1.value, retried: retried, attempts: 2, sleptBeforeRetry: sleptUntil,
        legacyResult: legacy.value.0, legacyOnCallerQueue: legacy.value.1,
        cancelledWith: cancelled.value.first, cancelledCompletions: cancelled.value.count,
        cancellationReachedTransport: reached,
        observed: observed, pollingStoppedAfterCancel: stopped
    )
}
