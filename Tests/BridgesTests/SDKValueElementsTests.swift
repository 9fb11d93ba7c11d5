import Bridges
import BridgesTesting
import LegacySDK
import TestSupport
import Testing

// MIGRATION.md, "Swift 6 with legacy types", 9: a Swift 5 SDK's value type as the element of a
// weak-owner loop and of a shared stream. Both hand one element to code in another isolation
// (shared(): to several consumers), so the element must be Sendable; the app states it, once,
// for a struct of plain values.

// `Reading` is a struct of `let` values (a `Double`, a `String`): safe to share between threads.
extension Reading: @unchecked Sendable {}  // `@retroactive` too, for an SDK from another package

@MainActor final class GaugeViewModel {
    private let bag = CancellationBag()
    private(set) var latest: Reading?
    private(set) var history: [Reading] = []

    func start(readings: SharedSequence<Reading, Never>) {
        readings.stream(buffering: .latest).forEach(weak: self, in: bag) { owner, reading in owner.latest = reading }
        readings.stream(buffering: .unbounded).forEach(weak: self, in: bag) { owner, reading in
            owner.history.append(reading)
        }
    }
}

@Suite("SDK values as elements", .timeLimit(.minutes(3)))
@MainActor
struct SDKValueElementsTests {
    @Test func sdkStructMadeSendableInTheApp_flowsThroughSharedAndWeakOwnerLoops() async throws {
        let leaks = LeakTracker()
        let box = SinkBox<Reading, Never>()
        let sensor = CallbackStream<Reading, Never> { sink in
            box.set(sink)
            return Cancellation()
        }
        await withSerialTasks {
            let model = GaugeViewModel()
            leaks.track(model)
            model.start(readings: sensor.shared())
            await box.ready.wait()
            await runUntilIdle()
            let readings = [Reading(value: 20.5, unit: "°C"), Reading(value: 21, unit: "°C")]
            for reading in readings { box.sink.yield(reading) }
            await runUntilIdle()
            #expect(model.history == readings)
            #expect(model.latest == readings.last)
        }
        await leaks.expectAllReleased()
    }
}
