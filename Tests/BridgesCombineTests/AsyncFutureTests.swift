import Bridges
import TestSupport
import Testing

@testable import BridgesCombine

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine

@Suite(.timeLimit(.minutes(3))) struct AsyncFutureTests {
    @Test func deliversTheValue_thenFinishes() async {
        let future = AsyncFuture<Int, Never> { 42 }
        let subscriber = RecordingSubscriber<Int, Never>(initialDemand: .max(1))
        future.subscribe(subscriber)
        await subscriber.waitForCompletion()
        #expect(subscriber.inputs == [42])
        #expect(subscriber.completions.count == 1)
    }

    @Test func typedFailure_arrivesAsTheFailure() async {
        let future = AsyncFuture<Int, Boom> { () async throws(Boom) -> Int in throw Boom() }
        let subscriber = RecordingSubscriber<Int, Boom>(initialDemand: .max(1))
        future.subscribe(subscriber)
        await subscriber.waitForCompletion()
        #expect(subscriber.inputs.isEmpty)
        if case .failure(let error) = subscriber.completions.first {
            #expect(error == Boom())
        } else {
            Issue.record("expected failure")
        }
    }

    @Test func isLazy_andRunsOncePerSubscriber() async {
        let runs = Counter()
        let future = AsyncFuture<Int, Never> { runs.increment() }
        #expect(runs.value == 0)
        let idle = RecordingSubscriber<Int, Never>()
        future.subscribe(idle)
        #expect(runs.value == 0)  // no demand, no task
        let first = RecordingSubscriber<Int, Never>(initialDemand: .max(1))
        let second = RecordingSubscriber<Int, Never>(initialDemand: .max(1))
        future.subscribe(first)
        future.subscribe(second)
        await first.waitForCompletion()
        await second.waitForCompletion()
        #expect(runs.value == 2)
        #expect(Set(first.inputs + second.inputs) == [1, 2])
        idle.cancel()
    }

    @Test func cancellingTheSubscription_cancelsTheTask() async {
        let started = Gate()
        let sawCancellation = Gate()
        let future = AsyncFuture<Int, any Error> {
            started.open()
            // Suspends until cancelled: a stand-in for a long network call.
            let (stream, _) = AsyncStream<Int>.makeStream()
            for await _ in stream {}
            if Task.isCancelled { sawCancellation.open() }
            throw CancellationError()
        }
        let subscriber = RecordingSubscriber<Int, any Error>(initialDemand: .max(1))
        future.subscribe(subscriber)
        await started.wait()
        subscriber.cancel()
        await sawCancellation.wait()
        #expect(subscriber.inputs.isEmpty)
        #expect(subscriber.completions.isEmpty)  // cancelled subscriptions are not completed
    }

    @available(BridgesCombineValues, *)
    @Test func combineFuture_valueForContrast_hasNoCancellation() async {
        // Combine's own Future runs at once, shared, and `.value` cannot cancel it: for contrast.
        let runs = Counter()
        let future = Future<Int, Never> { promise in promise(.success(runs.increment())) }
        #expect(runs.value == 1)  // eager: ran before anyone subscribed
        #expect(await future.value == 1)
        #expect(await future.value == 1)  // shared: not run again
    }
}

#endif
