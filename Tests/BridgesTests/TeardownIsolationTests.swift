// `Teardown.onTermination` in a Swift 6 `@MainActor` view model over a Swift 5 SDK: the handler
// touches the non-Sendable legacy manager as a `Cancellation` made there does (this file is the
// compile check: no @preconcurrency, nonisolated(unsafe) or @unchecked in the app code), runs on
// the main actor, and learns why the stream ended.
import Bridges
import BridgesTesting
import LegacySDK
import TestSupport
import Testing

@MainActor final class TerminationScreen {
    let manager = LegacyLocationManager()
    var terminations: [String] = []

    func locations() -> CallbackStream<Location, any Error> {
        CallbackStream(buffering: .unbounded) { [manager] sink in
            let proxy = LocationDelegate(sink)
            manager.delegate = proxy
            manager.start()
            return .onTermination { termination in
                MainActor.assertIsolated()
                manager.stop()
                manager.delegate = nil
                _ = proxy
                switch termination {
                case .finished: self.terminations.append("finished")
                case .failed(let error): self.terminations.append("failed: \(error)")
                case .cancelled: self.terminations.append("cancelled")
                }
            }
        }
    }
}

@Suite("Teardown.onTermination keeps its isolation", .timeLimit(.minutes(1)))
@MainActor
struct TeardownIsolationTests {
    @Test func mainActorHandler_consumerBreaks_stopsTheLegacyManagerOnTheMainActor() async throws {
        try await withLeakTracking { (tracker: LeakTracker) async throws in
            let screen = TerminationScreen()
            tracker.track(screen)
            let running = Gate()
            let stopped = Gate()
            screen.manager.onStart = { running.open() }
            screen.manager.onStop = { stopped.open() }
            let consumer = Task {
                for try await location in screen.locations() { return location.latitude }
                return -1
            }
            await running.wait()
            let proxy = WeakProbe(screen.manager.delegate)
            screen.manager.simulate(Location(latitude: 7, longitude: 0))
            let latitude = try await consumer.value
            #expect(latitude == 7)
            await stopped.wait()
            #expect(screen.terminations == ["cancelled"])
            #expect(screen.manager.stopCount == 1)
            #expect(screen.manager.delegate == nil)
            #expect(proxy.object == nil, "the handler kept the weakly held delegate until it ran")
        }
    }

    @Test func mainActorHandler_producerFails_learnsTheError() async throws {
        let screen = TerminationScreen()
        let running = Gate()
        let stopped = Gate()
        screen.manager.onStart = { running.open() }
        screen.manager.onStop = { stopped.open() }
        let consumer = Task {
            do {
                for try await _ in screen.locations() {}
                return "finished"
            } catch {
                return "\(error)"
            }
        }
        await running.wait()
        screen.manager.simulateFailure(LegacyError.failed("denied"))
        #expect(await consumer.value == "failed(\"denied\")")
        await stopped.wait()
        #expect(screen.terminations == ["failed: failed(\"denied\")"])
        #expect(screen.manager.delegate == nil)
    }

    @Test func nonisolatedHandler_runsBeforeTheLoopEnds() async throws {
        let ended = Collected<String>()
        let stream = makeNonisolatedStream(recordingInto: ended)
        for try await value in stream {
            #expect(value == 1)
            break
        }
        #expect(ended.values == ["cancelled"], "a nonisolated handler ran before the loop ended")
    }
}

/// A stream made in nonisolated code: its handler is `Sendable` and runs where the stream ends.
nonisolated func makeNonisolatedStream(recordingInto ended: Collected<String>) -> CallbackStream<Int, Never> {
    CallbackStream(buffering: .unbounded) { sink in
        sink.yield(1)
        return .onTermination { termination in
            _ = sink  // the producer keeps its sink until the stream ends
            if case .cancelled = termination { ended.append("cancelled") } else { ended.append("other") }
        }
    }
}
