// The patterns README, GettingStarted and MIGRATION document for a Swift 6 app over a Swift 5
// SDK whose classes are not Sendable (Tests/LegacySDK): the shapes compile as written (this file
// is the compile check: no @preconcurrency, nonisolated(unsafe), @unchecked, assumeIsolated or
// stored handle), and they cancel exactly the call they belong to.
import Bridges
import BridgesTesting
import LegacySDK
import TestSupport
import Testing

// MARK: - App code, as the docs write it

@MainActor final class ForecastViewModel {
    let client: LegacyWeatherClient
    init(client: LegacyWeatherClient) { self.client = client }

    func forecast(_ city: String) async throws -> Forecast {
        try await withCallback { done in
            let request = client.fetchForecast(city: city, completion: done)
            return Cancellation { request.cancel() }
        }
    }
}

/// A delegate for the legacy manager: a plain class, made and used on the main actor.
final class LocationDelegate: LegacyLocationDelegate {
    let sink: CallbackStream<Location, any Error>.Sink
    init(_ sink: CallbackStream<Location, any Error>.Sink) { self.sink = sink }
    func locationManager(_ manager: LegacyLocationManager, didUpdate location: Location) { sink.yield(location) }
    func locationManager(_ manager: LegacyLocationManager, didFailWithError error: Error) {
        sink.finish(throwing: error)
    }
}

/// A delegate proxy on Bridges' base class (`retained(until:)`).
final class LocationEvents: DelegateProxy<Location, any Error>, LegacyLocationDelegate, @unchecked Sendable {
    func locationManager(_ manager: LegacyLocationManager, didUpdate location: Location) { sink.yield(location) }
    func locationManager(_ manager: LegacyLocationManager, didFailWithError error: Error) {
        sink.finish(throwing: error)
    }
}

@MainActor final class LocationScreen {
    let manager = LegacyLocationManager()

    /// The issue's shape, verbatim: it compiles. (Its proxy is held by nothing but the weak
    /// delegate: `trackedLocations()` is the form that keeps it.)
    func locations() -> CallbackStream<Location, any Error> {
        CallbackStream(buffering: .latest) { [manager] sink in
            let proxy = LocationDelegate(sink)
            manager.delegate = proxy
            manager.start()
            return Cancellation {
                manager.stop()
                manager.delegate = nil
            }
        }
    }

    /// The documented shape: the teardown keeps the proxy until it ran.
    func trackedLocations() -> CallbackStream<Location, any Error> {
        CallbackStream(buffering: .latest) { [manager] sink in
            let proxy = LocationDelegate(sink)
            manager.delegate = proxy
            manager.start()
            return Cancellation {
                manager.stop()
                manager.delegate = nil
                _ = proxy
            }
        }
    }

    /// The same with `DelegateProxy.retained(until:)`.
    func proxiedLocations() -> CallbackStream<Location, any Error> {
        CallbackStream(buffering: .unbounded) { [manager] sink in
            let proxy = LocationEvents(sink)
            manager.delegate = proxy
            manager.start()
            return proxy.retained {
                manager.stop()
                manager.delegate = nil
            }
        }
    }
}

// MARK: - Tests

@Suite("Legacy SDK patterns in a Swift 6 app", .timeLimit(.minutes(3)))
@MainActor
struct LegacySDKPatternsTests {
    @Test func withCallback_overlappingCalls_cancellingTheFirstCancelsOnlyTheFirstRequest() async throws {
        let client = LegacyWeatherClient()
        let model = ForecastViewModel(client: client)
        let started = Collected<String>()
        let cancelled = Collected<String>()
        client.onRequest = { started.append($0.city) }
        client.onCancel = { cancelled.append($0.city) }

        let first = Task { try await model.forecast("Lisbon").summary }
        let second = Task { try await model.forecast("Porto").summary }
        await started.wait(count: 2)
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        await cancelled.wait(count: 1)

        #expect(cancelled.values == ["Lisbon"])
        #expect(client.requests[0].isCancelled && client.requests[0].cancelledOnMainQueue)
        #expect(!client.requests[1].isCancelled, "the second call's request is untouched")
        client.complete(client.requests[1], with: "sunny")
        #expect(try await second.value == "sunny")
        #expect(cancelled.values == ["Lisbon"])
    }

    @Test func withCallback_cancellationRunsOnTheMainActorBeforeTheCallerResumes() async throws {
        let client = LegacyWeatherClient()
        let model = ForecastViewModel(client: client)
        let started = Collected<String>()
        client.onRequest = { started.append($0.city) }
        let call = Task { try await model.forecast("Lisbon").summary }
        await started.wait(count: 1)
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        #expect(client.requests[0].isCancelled, "enqueued on the main actor before the caller's resumption")
    }

    @Test func callbackStream_mainActorBuilder_deliversThenTearsDownOnTheMainActor() async throws {
        let screen = LocationScreen()
        let stopped = Gate()
        let running = Gate()
        screen.manager.onStart = { running.open() }
        screen.manager.onStop = { stopped.open() }
        let consumer = Task {
            var seen: [Double] = []
            for try await location in screen.trackedLocations() {
                seen.append(location.latitude)
                break
            }
            return seen
        }
        await running.wait()
        let proxy = WeakProbe(screen.manager.delegate)
        #expect(proxy.object != nil, "the teardown keeps the weakly held delegate alive")
        screen.manager.simulate(Location(latitude: 1, longitude: 1))
        let seen = try await consumer.value
        #expect(seen == [1])
        await stopped.wait()
        #expect(screen.manager.stopCount == 1)
        #expect(screen.manager.delegate == nil)
        #expect(proxy.object == nil, "released once the teardown ran")
    }

    @Test func callbackStream_verbatimShape_losesItsProxy_andTheStreamFailsAndTearsDown() async throws {
        // The issue's shape compiles; at run time nothing holds its proxy but the manager's weak
        // `delegate`, so the proxy and its sink go when the builder returns: the stream ends with
        // `BridgeError.sinkDropped` (a sink released without finish(), reported; a lost source
        // never reads as a complete loop) and the teardown runs.
        let screen = LocationScreen()
        let stopped = Gate()
        screen.manager.onStop = { stopped.open() }
        await expectDiagnostics([.sinkDropped]) {
            do {
                for try await _ in screen.locations() {}
                Issue.record("a lost producer ended the loop as if complete")
            } catch BridgeError.sinkDropped {
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
        await stopped.wait()
        #expect(!screen.manager.isRunning)
        #expect(screen.manager.delegate == nil)
    }

    @Test func delegateProxyRetained_mainActorDetach_failsThroughAndDetaches() async throws {
        let screen = LocationScreen()
        let stopped = Gate()
        let running = Gate()
        screen.manager.onStart = { running.open() }
        screen.manager.onStop = { stopped.open() }
        let consumer = Task {
            var seen: [Double] = []
            do {
                for try await location in screen.proxiedLocations() { seen.append(location.latitude) }
            } catch LegacyError.failed(let reason) {
                return (seen, reason)
            }
            return (seen, "finished")
        }
        await running.wait()
        let proxy = WeakProbe(screen.manager.delegate)
        screen.manager.simulate(Location(latitude: 3, longitude: 0))
        screen.manager.simulateFailure(LegacyError.failed("denied"))
        let (seen, reason) = try await consumer.value
        #expect(seen == [3])
        #expect(reason == "denied")
        await stopped.wait()
        #expect(screen.manager.delegate == nil)
        #expect(proxy.object == nil)
    }

    @Test func cancellationMadeOnAnActor_runsOnThatActor() async {
        let owner = ForecastActor()
        let ran = Gate()
        let token = await owner.start(opening: ran)
        token.cancel()
        await ran.wait()
        #expect(await owner.cancelledCities == ["Lisbon"])
    }
}

/// Holds a weak reference for a test to check a release.
struct WeakProbe {
    weak var object: AnyObject?
    init(_ object: AnyObject?) { self.object = object }
}

/// An actor that owns a legacy client: its tokens' actions run on it.
actor ForecastActor {
    let client = LegacyWeatherClient()
    var cancelledCities: [String] = []

    func start(opening gate: Gate) -> Cancellation {
        client.onCancel = { request in
            self.assertIsolated("a token made on an actor runs its action there")
            gate.open()
        }
        let request = client.fetchForecast(city: "Lisbon") { _ in }
        return Cancellation {
            request.cancel()
            self.record(request.city)
        }
    }

    private func record(_ city: String) { cancelledCities.append(city) }
}
