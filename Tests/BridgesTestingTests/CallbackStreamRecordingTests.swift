import BridgesTesting
import Testing

/// The testing module against the real engine: a `CallbackStream` over a `FakeEventSource`,
/// observed with a `Recorder`, checked for teardown, leaks and misuse.
@Suite(.timeLimit(.minutes(3))) struct CallbackStreamRecordingTests {
    struct Failure: Error, Equatable {}
    final class Proxy: Sendable {}

    static func locations(
        from source: FakeEventSource<Int>, proxy: Proxy, buffering: BufferingPolicy = .unbounded
    ) -> CallbackStream<Int, any Error> {
        CallbackStream(buffering: buffering) { sink in
            let token = source.subscribe(
                onEvent: {
                    _ = proxy
                    _ = sink.yield($0)
                },
                onCompletion: { error in
                    if let error { sink.finish(throwing: error) } else { sink.finish() }
                }
            )
            return Cancellation { token.cancel() }
        }
    }

    @Test func elementsThenFinish_areRecordedAndTheSourceIsTornDown() async throws {
        let source = FakeEventSource<Int>()
        try await withBridgesDiagnosticsAsFailures {
            try await withLeakTracking { tracker in
                let proxy = Proxy()
                tracker.track(proxy, as: "delegate proxy")
                let recorder = Self.locations(from: source, proxy: proxy).record()
                let subscription = try await source.nextSubscription()
                source.yield(1)
                source.yield(2)
                #expect(try await recorder.next() == 1)
                #expect(try await recorder.next() == 2)
                source.finish()
                await recorder.expectFinished()
                await subscription.waitForTeardown()
                #expect(source.teardownCount == 1)
                await recorder.waitForEnd()
            }
        }
    }

    @Test func failure_isRecorded() async throws {
        let source = FakeEventSource<Int>()
        let recorder = Self.locations(from: source, proxy: Proxy()).record()
        let subscription = try await source.nextSubscription()
        source.yield(7)
        source.finish(throwing: Failure())
        #expect(try await recorder.next() == 7)
        await recorder.expectFailure(Failure())
        await subscription.waitForTeardown()
        #expect(source.teardownCount == 1)
    }

    @Test func cancellingTheRecorder_tearsTheSourceDownAndReleasesTheProxy() async throws {
        let source = FakeEventSource<Int>()
        try await withLeakTracking { tracker in
            let proxy = Proxy()
            tracker.track(proxy, as: "delegate proxy")
            let recorder = Self.locations(from: source, proxy: proxy).record()
            let subscription = try await source.nextSubscription()
            recorder.cancel()
            await subscription.waitForTeardown()
            await recorder.waitForEnd()
            #expect(source.subscriberCount == 0)
            #expect(source.yield(1) == 0)
        }
    }

    @Test func latestPolicy_insideSerialTasks_conflatesABurst() async {
        let source = FakeEventSource<Int>()
        await withSerialTasks {
            let stream = CallbackStream<Int, Never>(buffering: .latest) { sink in
                source.subscribe(onEvent: { _ = sink.yield($0) })
            }
            let consumer = Task {
                var received: [Int] = []
                for await value in stream {
                    received.append(value)
                    if value == 5 { break }
                }
                return received
            }
            #expect(source.subscribeCount == 0)  // cold, and serial: the consumer has not run yet
            await runUntilIdle()  // it subscribed and waits for an element
            for value in 1...5 { source.yield(value) }  // 1 goes to the waiting consumer; 2...5 conflate to 5
            #expect(await consumer.value == [1, 5])
            await runUntilIdle()
            #expect(source.teardownCount == 1)
        }
    }
}
