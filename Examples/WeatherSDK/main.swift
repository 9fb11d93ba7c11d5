import Foundation

// `swift run WeatherSDK`: a 2.0 SDK written in async/await that keeps its 1.x completion API.
if #available(BridgesClock, *) {
    let report = try await runWeatherSDK()
    let ok = report.v1Result == Forecast(city: "Bergen", celsius: 4)
        && report.retried == Forecast(city: "Oslo", celsius: -3) && report.sleptBeforeRetry == .seconds(1)
        && report.legacyResult == Forecast(city: "Bergen", celsius: 6) && report.legacyOnCallerQueue
        && report.cancelledWith == "CancellationError" && report.cancelledCompletions == 1
        && report.cancellationReachedTransport
        && report.observed == [Forecast(city: "Oslo", celsius: -3), Forecast(city: "Oslo", celsius: -1)]
        && report.pollingStoppedAfterCancel
    print(ok ? "WeatherSDK: OK" : "WeatherSDK: FAILED \(report)")
    exit(ok ? 0 : 1)
} else {
    print("WeatherSDK uses Clock and Duration: it needs macOS 13 / iOS 16 or later")
    exit(1)
}
