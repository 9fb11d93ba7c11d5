import Bridges
import BridgesTesting
import LegacySDK
import TestSupport
import Testing

// App code over a Swift 5 SDK's seams (a service protocol with a non-`Sendable` handler, a
// manager protocol with a `weak var delegate`), and the tests' fakes of those seams made from
// BridgesTesting's fakes, as an app's test target writes them: no `nonisolated(unsafe)`, no
// hand-written fake class beyond the one forwarding method of the SDK's own protocol.

/// The app: a `@MainActor` view model over the SDK's search protocol.
@MainActor final class CityPickerViewModel {
    private let search: any LegacyCitySearch
    private(set) var cities: [String] = []
    init(search: any LegacyCitySearch) { self.search = search }

    func find(_ query: String) async throws {
        cities = try await withCallback { done in search.searchCities(matching: query, completion: done) }
    }
}

/// The test's fake of the SDK's protocol: its non-`Sendable` handler goes straight to
/// `FakeCompletionAPI`, which the test then completes.
final class FakeCitySearch: LegacyCitySearch {
    let api = FakeCompletionAPI<String, [String]>()
    func searchCities(matching query: String, completion: @escaping (Result<[String], Error>) -> Void) {
        api.call(query, completion: completion)
    }
}

/// The app's seam over the SDK's location manager: what its view models use.
protocol LocationManaging: AnyObject {
    var delegate: (any LegacyLocationDelegate)? { get set }
    func start()
    func stop()
}

extension LegacyLocationManager: LocationManaging {}

/// The test's fake of the seam: `FakeDelegateSource` already has its members.
extension FakeDelegateSource: LocationManaging where Delegate == any LegacyLocationDelegate {}

@MainActor final class TrackerViewModel {
    private let manager: any LocationManaging
    init(manager: any LocationManaging) { self.manager = manager }

    func locations() -> CallbackStream<Location, any Error> {
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

@Suite("Fakes of a legacy SDK's seams", .timeLimit(.minutes(3)))
@MainActor
struct LegacySDKFakesTests {
    @Test func fakeCompletionAPI_backsAProtocolWithANonSendableHandler() async throws {
        let leaks = LeakTracker()
        let search = FakeCitySearch()
        do {
            let model = CityPickerViewModel(search: search)
            leaks.track(model)
            let find = Task { try await model.find("Lis") }
            let call = try await search.api.nextInvocation()
            #expect(call.request == "Lis")
            call.complete(with: ["Lisbon"])
            try await find.value
            #expect(model.cities == ["Lisbon"])
        }
        await leaks.expectAllReleased()
    }

    @Test func fakeDelegateSource_standsInForTheAppsManagerProtocol() async throws {
        let leaks = LeakTracker()
        let manager = FakeDelegateSource<any LegacyLocationDelegate>()
        let system = LegacyLocationManager()  // what the SDK passes its delegate as the sender
        try await withSerialTasks {
            let model = TrackerViewModel(manager: manager)
            leaks.track(model)
            let recorder = model.locations().record()
            await runUntilIdle()  // the recorder started iterating: the builder ran
            #expect(manager.calls == [.delegateSet, .start])
            let lisbon = Location(latitude: 38.7, longitude: -9.1)
            #expect(manager.send { $0.locationManager(system, didUpdate: lisbon) })
            let first = try await recorder.next()
            #expect(first == lisbon)
            recorder.cancel()
            await recorder.waitForEnd()
            await runUntilIdle()  // the teardown, on the main actor
            #expect(manager.calls == [.delegateSet, .start, .stop, .delegateCleared])
            #expect(!manager.send { $0.locationManager(system, didUpdate: lisbon) }, "nobody listens after stop()")
        }
        await leaks.expectAllReleased()
    }
}
