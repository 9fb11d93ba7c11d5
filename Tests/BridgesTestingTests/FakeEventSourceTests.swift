import BridgesTesting
import Testing

@Suite(.timeLimit(.minutes(3))) struct FakeEventSourceTests {
    struct Failure: Error, Equatable {}

    /// A hand-written bridge from the source to an AsyncThrowingStream (what CallbackStream
    /// does for real): subscribes when built, tears down when the stream terminates.
    static func stream(_ source: FakeEventSource<Int>) -> AsyncThrowingStream<Int, any Error> {
        AsyncThrowingStream { continuation in
            let token = source.subscribe(
                onEvent: { continuation.yield($0) },
                onCompletion: { error in continuation.finish(throwing: error) }
            )
            continuation.onTermination = { _ in token.cancel() }
        }
    }

    @Test func emitAndFinish_reachTheConsumerAndTearDown() async throws {
        let source = FakeEventSource<Int>()
        let recorder = Self.stream(source).record()
        let subscription = try await source.nextSubscription()
        #expect(source.subscriberCount == 1)
        #expect(source.yield(1) == 1)
        #expect(source.yield(2) == 1)
        #expect(try await recorder.next() == 1)
        #expect(try await recorder.next() == 2)
        source.finish()
        await recorder.expectFinished()
        await subscription.waitForTeardown()
        #expect(source.subscriberCount == 0)
        #expect(source.subscribeCount == 1)
        #expect(source.teardownCount == 1)
        #expect(source.yield(3) == 0)  // a finished subscription receives nothing more
    }

    @Test func fail_reachesTheConsumer() async throws {
        let source = FakeEventSource<Int>()
        let recorder = Self.stream(source).record()
        let subscription = try await source.nextSubscription()
        source.yield(1)
        source.finish(throwing: Failure())
        #expect(try await recorder.next() == 1)
        await recorder.expectFailure(Failure())
        await subscription.waitForTeardown()
    }

    @Test func consumerCancellation_tearsTheSubscriptionDownAndReleasesItsHandlers() async throws {
        final class Proxy: Sendable {}
        let source = FakeEventSource<Int>()
        try await withLeakTracking { tracker in
            let proxy = Proxy()
            tracker.track(proxy, as: "delegate proxy")
            let consumer = Task { [proxy] in
                let stream = AsyncThrowingStream<Int, any Error> { continuation in
                    let token = source.subscribe(onEvent: {
                        _ = proxy
                        continuation.yield($0)
                    })
                    continuation.onTermination = { _ in token.cancel() }
                }
                for try await _ in stream {}
            }
            let subscription = try await source.nextSubscription()
            consumer.cancel()
            await subscription.waitForTeardown()
            _ = await consumer.result
            #expect(subscription.isTornDown)
            #expect(!subscription.isActive)
            #expect(source.teardownCount == 1)
        }
    }

    @Test func severalSubscribers_eachReceiveEveryEvent() async throws {
        let source = FakeEventSource<Int>()
        let first = Self.stream(source).record()
        let second = Self.stream(source).record()
        _ = try await source.nextSubscription()
        _ = try await source.nextSubscription()
        #expect(source.yield(10) == 2)
        #expect(try await first.next() == 10)
        #expect(try await second.next() == 10)
        first.cancel()
        await first.waitForEnd()  // the stream terminated, and its onTermination tore down
        #expect(source.teardownCount == 1)
        #expect(source.yield(11) == 1)
        #expect(try await second.next() == 11)
        source.finish()
        await second.expectFinished()
        for subscription in source.subscriptions { await subscription.waitForTeardown() }
        #expect(source.teardownCount == 2)
    }

    @Test func teardown_countsOnceHoweverOftenItIsCancelled() async throws {
        let source = FakeEventSource<Int>()
        let token = source.subscribe(onEvent: { _ in })
        token.cancel()
        token.cancel()
        #expect(source.teardownCount == 1)
        #expect(source.subscriberCount == 0)
    }

    @Test func nextSubscription_whenNobodySubscribes_failsInsteadOfHanging() async {
        let source = FakeEventSource<Int>()
        await withKnownIssue {
            _ = try await source.nextSubscription(timeout: .zero)
        }
    }
}
