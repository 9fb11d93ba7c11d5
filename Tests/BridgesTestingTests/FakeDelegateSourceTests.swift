import BridgesTesting
import TestSupport
import Testing

/// The delegate proxy a user writes for a delegate-based manager.
private final class Readings: DelegateProxy<Int, any Error>, FakeSourceDelegate, @unchecked Sendable {
    func source(didReceive event: Int) { _ = sink.yield(event) }
    func source(didFailWith error: any Error) { sink.finish(throwing: error) }
}

@Suite(.timeLimit(.minutes(3))) struct FakeDelegateSourceTests {
    /// The `@MainActor` view model's shape: a manager that is not `Sendable`, captured by the
    /// builder and the teardown, which run on the main actor; the stream keeps the weakly held
    /// proxy alive until the teardown has run. A loop left by `break` on the main actor has run
    /// that main-actor teardown before its next statement: nothing to wait for.
    @MainActor
    @Test func callbackStreamOverDelegateProxy_deliversEvents_thenStopsAndClearsTheDelegate() async throws {
        try await withLeakTracking { tracker in
            let manager = FakeDelegateSource<Readings>()
            tracker.track(manager)
            manager.whenStarted = { $0.yield(1) }  // a first reading at once, as managers do
            let readings = CallbackStream<Int, any Error>(buffering: .unbounded) { sink in
                let proxy = Readings(sink)
                tracker.track(proxy)
                manager.delegate = proxy
                manager.start()
                return proxy.retained {
                    manager.stop()
                    manager.delegate = nil
                }
            }
            var received: [Int] = []
            for try await reading in readings {
                received.append(reading)
                if reading == 1 {
                    #expect(manager.yield(2), "the stream keeps the weakly held proxy alive")
                } else {
                    break
                }
            }
            #expect(received == [1, 2])
            #expect(manager.calls == [.delegateSet, .start, .stop, .delegateCleared])
            #expect(!manager.isRunning)
            #expect(!manager.yield(3))
        }
    }

    @MainActor
    @Test func fail_endsTheStreamWithTheManagersError_andTheTeardownStillRuns() async {
        await withLeakTracking { tracker in
            let manager = FakeDelegateSource<Readings>()
            tracker.track(manager)
            manager.whenStarted = { $0.finish(throwing: Boom()) }
            let readings = CallbackStream<Int, any Error>(buffering: .unbounded) { sink in
                let proxy = Readings(sink)
                tracker.track(proxy)
                manager.delegate = proxy
                manager.start()
                return proxy.retained {
                    manager.stop()
                    manager.delegate = nil
                }
            }
            await #expect(throws: Boom.self) {
                for try await _ in readings {}
            }
            #expect(manager.calls == [.delegateSet, .start, .stop, .delegateCleared])
            #expect(manager.startCount == 1 && manager.stopCount == 1)
        }
    }
}
