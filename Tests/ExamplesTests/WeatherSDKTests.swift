import Testing

@testable import WeatherSDK

@Suite("Example: WeatherSDK", .timeLimit(.minutes(3)))
struct WeatherSDKTests {
    @Test func asyncRetryOnVirtualTime_legacyCallersKeepTheirAPI_andCanCancel() async throws {
        let report = try await runWeatherSDK(log: { _ in })
        #expect(report.v1Result == Forecast(city: "Bergen", celsius: 4))
        #expect(report.retried == Forecast(city: "Oslo", celsius: -3))
        #expect(report.sleptBeforeRetry == .seconds(1))
        #expect(report.legacyResult == Forecast(city: "Bergen", celsius: 6))
        #expect(report.legacyOnCallerQueue)
        #expect(report.cancelledWith == "CancellationError")
        #expect(report.cancelledCompletions == 1)
        #expect(report.cancellationReachedTransport)
        #expect(report.observed == [Forecast(city: "Oslo", celsius: -3), Forecast(city: "Oslo", celsius: -1)])
        #expect(report.pollingStoppedAfterCancel)
    }
}
