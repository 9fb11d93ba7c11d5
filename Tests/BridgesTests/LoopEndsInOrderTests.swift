// A screen that re-appears restarts its delegate stream on the main actor: the old
// loop's teardown must have stopped the manager before the new stream's builder starts it, or
// the old teardown stops the manager the new stream just started (a dead stream, no error).
// The app code here is what an iOS team writes: a Swift 6 `@MainActor` view model over a
// manager that is not `Sendable` (BridgesTesting's `FakeDelegateSource`, the shape of
// `CLLocationManager`), and an actor that does the same.
import Bridges
import BridgesTesting
import TestSupport
import Testing

/// The delegate proxy the app writes for the manager.
final class ReadingsProxy: DelegateProxy<Int, any Error>, FakeSourceDelegate, @unchecked Sendable {
    func source(didReceive event: Int) { _ = sink.yield(event) }
    func source(didFailWith error: any Error) { sink.finish(throwing: error) }
}

/// README's delegate pattern in a `@MainActor` view model.
@MainActor final class ReadingsScreen {
    let manager = FakeDelegateSource<ReadingsProxy>()
    var task: Task<Void, Never>?
    var received: [Int] = []
    /// Called on the main actor with each reading the screen's task received.
    var onReading: ((Int) -> Void)?

    init() { manager.whenStarted = { _ = $0.yield(1) } }  // a manager that reports at once

    func readings() -> CallbackStream<Int, any Error> {
        CallbackStream(buffering: .unbounded) { [manager] sink in
            let proxy = ReadingsProxy(sink)
            manager.delegate = proxy
            manager.start()
            return proxy.retained {
                manager.stop()
                manager.delegate = nil
            }
        }
    }

    /// What `onAppear` / a retry does: the previous loop is cancelled, a new one starts.
    func appear() {
        task?.cancel()
        task = Task {
            do {
                for try await reading in readings() {
                    received.append(reading)
                    onReading?(reading)
                }
            } catch {}
        }
    }
}

/// The same pattern in an actor of the app's own.
actor ReadingsService {
    let manager = FakeDelegateSource<ReadingsProxy>()

    init() { manager.whenStarted = { _ = $0.yield(1) } }

    func readings() -> CallbackStream<Int, any Error> {
        CallbackStream(buffering: .unbounded) { sink in
            let manager = self.manager
            let proxy = ReadingsProxy(sink)
            manager.delegate = proxy
            manager.start()
            return proxy.retained {
                manager.stop()
                manager.delegate = nil
            }
        }
    }

    /// Takes the first reading of one loop, then of a second one started on the next line;
    /// returns what the manager had recorded between them and at the end.
    func twoLoops() async throws -> (between: [FakeDelegateSource<ReadingsProxy>.Call], second: Int?, running: Bool) {
        for try await _ in readings() { break }
        let between = manager.calls
        var second: Int?
        for try await reading in readings() {
            second = reading
            // The second stream is alive: the manager runs and its delegate is the new proxy.
            if reading == 1, manager.yield(2) { continue }
            break
        }
        return (between, second, manager.isRunning)
    }

    func calls() -> [FakeDelegateSource<ReadingsProxy>.Call] { manager.calls }
}

@Suite("A loop ends when and in the order the app asked", .timeLimit(.minutes(3)))
struct LoopEndsInOrderTests {
    typealias Call = FakeDelegateSource<ReadingsProxy>.Call
    static let rounds = 1_000

    /// `for await … { break }` then a new loop on the next line, on the main actor: the first
    /// loop's teardown (written on the main actor) has run before the next statement.
    @MainActor
    @Test func breakThenRestart_onTheMainActor_theTeardownRanBeforeTheNextStatement() async throws {
        try await withLeakTracking { tracker in
            let screen = ReadingsScreen()
            tracker.track(screen.manager)
            for round in 0..<Self.rounds {
                var readings: [Int] = []
                for try await reading in screen.readings() {
                    readings.append(reading)
                    if reading == 1, screen.manager.yield(2) { continue }  // the new stream is alive
                    break
                }
                #expect(readings == [1, 2], "round \(round): the stream was dead (\(readings))")
                let calls = screen.manager.calls
                #expect(
                    Array(calls.suffix(4)) == [.delegateSet, .start, .stop, .delegateCleared],
                    "round \(round): after the loop, the manager saw \(calls.suffix(6))")
                #expect(calls.count == 4 * (round + 1), "round \(round): \(calls.count) calls")
                if calls.count != 4 * (round + 1) { break }
                #expect(!screen.manager.isRunning && screen.manager.delegate == nil)
            }
        }
    }

    /// `task?.cancel(); task = Task { for try await … }` on the main actor (a screen that
    /// re-appears, a retry): the old task's teardown stops the manager before the new task's
    /// builder starts it, every round.
    @MainActor
    @Test func cancelThenNewTask_onTheMainActor_theOldTeardownRunsBeforeTheNewBuilder() async {
        await withLeakTracking { tracker in
            let screen = ReadingsScreen()
            tracker.track(screen.manager)
            let readings = Collected<Int>()
            screen.onReading = { readings.append($0) }
            for round in 0..<Self.rounds {
                screen.appear()
                await readings.wait(count: 2 * round + 1)  // the new task's first reading
                #expect(screen.manager.isRunning, "round \(round): the new stream's manager was stopped")
                let alive = screen.manager.yield(2)
                #expect(alive, "round \(round): the new stream's delegate was cleared")
                if !alive { break }
                await readings.wait(count: 2 * round + 2)
                let calls = screen.manager.calls
                let expected: [Call] =
                    round == 0 ? [.delegateSet, .start] : [.stop, .delegateCleared, .delegateSet, .start]
                #expect(Array(calls.suffix(expected.count)) == expected, "round \(round): \(calls.suffix(6))")
                if Array(calls.suffix(expected.count)) != expected { break }
            }
            let last = screen.task
            last?.cancel()
            await last?.value
            #expect(readings.values == Array([1, 2].repeated(Self.rounds)))
            let calls = screen.manager.calls
            #expect(calls.count == 4 * Self.rounds && Array(calls.suffix(2)) == [.stop, .delegateCleared])
            screen.task = nil
        }
    }

    /// Two loops one after the other in an actor of the app's own: the same order.
    @Test func twoLoopsInAnActor_theFirstTeardownRanBeforeTheSecondBuilder() async throws {
        let service = ReadingsService()
        for round in 0..<Self.rounds {
            let (between, second, running) = try await service.twoLoops()
            #expect(
                Array(between.suffix(4)) == [.delegateSet, .start, .stop, .delegateCleared],
                "round \(round): after the first loop the manager saw \(between.suffix(6))")
            #expect(second == 2 && running == false, "round \(round): the second stream was dead")
            if second != 2 { break }
        }
        let calls = await service.calls()
        #expect(calls.count == 8 * Self.rounds && Array(calls.suffix(2)) == [.stop, .delegateCleared])
    }
}

extension Array {
    fileprivate func repeated(_ count: Int) -> [Element] { (0..<count).flatMap { _ in self } }
}
