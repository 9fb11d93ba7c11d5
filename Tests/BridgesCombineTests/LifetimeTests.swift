import Bridges
import BridgesTesting
import Testing

@testable import BridgesCombine

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine

/// The bridges' own subscribers are released when the bridge ends, whichever way it ends.
@Suite(.timeLimit(.minutes(3))) struct LifetimeTests {
    @Test func streamSubscriber_isReleasedAfterTheConsumerCancels() async {
        let upstream = DemandRecordingPublisher<Int, Never>()
        let box = WeakSubscriberBox()
        let stream = SubscriberCapturingPublisher(upstream: upstream, box: box).stream(buffering: .unbounded)
        let consumer = Task { for await _ in stream {} }
        await upstream.waitForDemand()
        #expect(box.object != nil)
        consumer.cancel()
        await consumer.value
        await upstream.waitForCancellation()
        #expect(box.object == nil)
    }

    @Test func streamSubscriber_isReleasedAfterUpstreamCompletes() async {
        let upstream = DemandRecordingPublisher<Int, Never>()
        let box = WeakSubscriberBox()
        let stream = SubscriberCapturingPublisher(upstream: upstream, box: box).stream(buffering: .rendezvous)
        let consumer = Task { for await _ in stream {} }
        await upstream.send(1)
        upstream.send(completion: .finished)
        await consumer.value
        #expect(box.object == nil)
    }

    @Test func firstValueSubscriber_isReleasedAfterTheValue() async {
        let upstream = DemandRecordingPublisher<Int, Never>()
        let box = WeakSubscriberBox()
        let waiting = Task { try? await SubscriberCapturingPublisher(upstream: upstream, box: box).firstValue }
        await upstream.send(3)
        #expect(await waiting.value == 3)
        #expect(box.object == nil)
    }

    @Test func asyncFutureSubscription_releasesItsSubscriberOnCancel() async {
        let released = Gate()
        let started = Gate()
        do {
            let subscriber = RecordingSubscriber<Int, any Error>(initialDemand: .max(1), deinitGate: released)
            AsyncFuture<Int, any Error> {
                started.open()
                let (stream, _) = AsyncStream<Int>.makeStream()
                for await _ in stream {}
                throw CancellationError()
            }.subscribe(subscriber)
            await started.wait()
            subscriber.cancel()
        }
        await released.wait()
    }
}

#endif
