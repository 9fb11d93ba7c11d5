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

/// Demand-compliance laws for `sequence.publisher()`, checked with a recording subscriber.
@Suite(.timeLimit(.minutes(3))) struct AsyncSequencePublisherTests {
    // MARK: - Demand

    /// Without demand the task fetches one element ahead (so that an empty sequence can
    /// complete at once) and emits nothing.
    @Test func subscribe_withoutDemand_fetchesOneAhead_andEmitsNothing() async {
        let sequence = ProbeSequence()
        let subscriber = RecordingSubscriber<Int, any Error>()
        sequence.publisher().subscribe(subscriber)
        await subscriber.waitForSubscription()
        await sequence.probe.nextCalls.wait(untilAtLeast: 1)
        #expect(subscriber.inputs.isEmpty)
        subscriber.request(.max(1))
        await subscriber.wait(forInputs: 1)
        subscriber.cancel()
        await sequence.probe.released.wait(untilAtLeast: 1)
        #expect(sequence.probe.iterators.value == 1)
        #expect(subscriber.inputs == [0])
        #expect(subscriber.excess == 0)
        #expect(sequence.probe.nextCalls.value <= 2, "at most one element fetched ahead of demand")
    }

    @Test func request_n_deliversExactlyN_andFetchesAtMostOneAhead() async {
        let sequence = ProbeSequence()  // infinite
        let subscriber = RecordingSubscriber<Int, any Error>(initialDemand: .max(3))
        sequence.publisher().subscribe(subscriber)
        await subscriber.wait(forInputs: 3)
        subscriber.request(.max(2))
        await subscriber.wait(forInputs: 5)
        subscriber.cancel()
        await sequence.probe.released.wait(untilAtLeast: 1)  // the iterating task has ended
        #expect(subscriber.inputs == [0, 1, 2, 3, 4])
        #expect(subscriber.excess == 0)
        // Five delivered, plus at most the one fetched ahead while waiting for demand.
        #expect((5...6).contains(sequence.probe.nextCalls.value))
        #expect(subscriber.completions.isEmpty)
    }

    /// An exhausted sequence completes right after its last element, with no demand left
    /// (Combine's own publishers and Reactive Streams §1.4 do the same).
    @Test func exhaustedSequence_completesWithoutFurtherDemand() async {
        let sequence = ProbeSequence(count: 3)
        let subscriber = RecordingSubscriber<Int, any Error>(initialDemand: .max(3))
        sequence.publisher().subscribe(subscriber)
        await subscriber.waitForCompletion()
        await sequence.probe.released.wait(untilAtLeast: 1)
        #expect(subscriber.inputs == [0, 1, 2])
        #expect(subscriber.completions.count == 1)
        #expect(subscriber.completions.first?.isFinished == true)
        #expect(subscriber.excess == 0)
    }

    @Test func demandReturnedFromReceive_isHonoured() async {
        let sequence = ProbeSequence(count: 100)
        let subscriber = RecordingSubscriber<Int, any Error>(initialDemand: .max(1)) { _, _ in .max(1) }
        sequence.publisher().subscribe(subscriber)
        await subscriber.waitForCompletion()
        #expect(subscriber.inputs == Array(0..<100))
        #expect(subscriber.excess == 0)
        #expect(subscriber.completions.count == 1)
        #expect(subscriber.completions.first?.isFinished == true)
    }

    @Test func unlimitedDemand_deliversAllInOrder_thenCompletesExactlyOnce() async {
        let sequence = ProbeSequence(count: 10_000)
        let subscriber = RecordingSubscriber<Int, any Error>(initialDemand: .unlimited)
        sequence.publisher().subscribe(subscriber)
        await subscriber.waitForCompletion()
        await sequence.probe.released.wait(untilAtLeast: 1)
        #expect(subscriber.inputs == Array(0..<10_000))
        #expect(subscriber.completions.count == 1)
        #expect(sequence.probe.nextCalls.value == 10_001)  // the last one returned nil
    }

    @Test func requestNone_isReportedAndIgnored() async {
        let log = DiagnosticLog()
        let sequence = ProbeSequence()
        let publisher = Diagnostics.withHandler(log.handler) { sequence.publisher() }
        let subscriber = RecordingSubscriber<Int, any Error>()
        publisher.subscribe(subscriber)
        subscriber.request(.none)
        #expect(log.kinds == [.invalidDemand])
        #expect(subscriber.inputs.isEmpty)  // .none let nothing through
        subscriber.request(.max(1))
        await subscriber.wait(forInputs: 1)
        subscriber.cancel()
        await sequence.probe.released.wait(untilAtLeast: 1)
        #expect(subscriber.inputs == [0])
        // One spelling of the demand, and what to request instead.
        #expect(
            log.all.first?.message.hasPrefix(
                "request(.none) on a subscription to an AsyncSequence publisher; the request was ignored.") == true)
        #expect(log.all.first?.message.contains("Request .max(n) with n ≥ 1 or .unlimited") == true)
    }

    // MARK: - Cancel

    @Test func cancelInsideReceive_stopsAtOnce_andReleasesEverything() async {
        let sequence = ProbeSequence()
        let released = Gate()
        weak var weakSubscriber: RecordingSubscriber<Int, any Error>?
        do {
            let subscriber = RecordingSubscriber<Int, any Error>(initialDemand: .unlimited, deinitGate: released) {
                value, subscriber in
                if value == 4 { subscriber.cancel() }
                return .none
            }
            weakSubscriber = subscriber
            sequence.publisher().subscribe(subscriber)
            await subscriber.wait(forInputs: 5)
            await sequence.probe.released.wait(untilAtLeast: 1)
            #expect(subscriber.inputs == [0, 1, 2, 3, 4])
            #expect(subscriber.afterCancel == 0)
            #expect(subscriber.completions.isEmpty)  // cancelled, never completed
            #expect(sequence.probe.nextCalls.value == 5)  // nothing fetched after the cancel
        }
        await released.wait()
        #expect(weakSubscriber == nil)
    }

    @Test func cancel_whileSuspendedInNext_cancelsTheIteratingTask() async {
        let terminated = Gate()
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        continuation.onTermination = { termination in
            if case .cancelled = termination { terminated.open() }
        }
        let subscriber = RecordingSubscriber<Int, Never>(initialDemand: .unlimited)
        let publisher: AsyncSequencePublisher<AsyncStream<Int>, Never> = stream.publisher()
        publisher.subscribe(subscriber)
        continuation.yield(1)
        await subscriber.wait(forInputs: 1)
        subscriber.cancel()
        await terminated.wait()  // the task's cancellation reached the stream's producer
        if case .terminated = continuation.yield(2) {} else { Issue.record("the stream should be terminated") }
        #expect(subscriber.inputs == [1])
        #expect(subscriber.completions.isEmpty)
    }

    @Test func cancel_beforeDemand_emitsNothing_andReleasesTheSubscriber() async {
        let sequence = ProbeSequence()
        let released = Gate()
        do {
            let subscriber = RecordingSubscriber<Int, any Error>(deinitGate: released)
            sequence.publisher().subscribe(subscriber)
            subscriber.cancel()
            subscriber.request(.max(1))  // after cancel: nothing happens
            #expect(subscriber.inputs.isEmpty)
        }
        await released.wait()
        #expect(sequence.probe.iterators.value <= 1)  // the task may have made its iterator
    }

    /// `cancel()` is final: a cross-thread cancel racing emission lets no `receive` start after
    /// it returned (a call in progress is waited for), never a completion, and the task ends.
    @Test func cancel_racingEmission_noReceiveAfterCancelReturned_stress() async {
        for _ in 0..<2_000 {
            let sequence = ProbeSequence()
            let subscriber = RecordingSubscriber<Int, any Error>(initialDemand: .unlimited)
            sequence.publisher().subscribe(subscriber)
            await subscriber.wait(forInputs: 1)
            subscriber.cancel()
            await sequence.probe.released.wait(untilAtLeast: 1)
            #expect(subscriber.afterCancel == 0)
            #expect(subscriber.completions.isEmpty)
            #expect(subscriber.inputs == Array(0..<subscriber.inputs.count))
        }
    }

    // MARK: - Isolation

    /// A `sink` written in a `@MainActor` type is main-actor isolated, and Swift 6 checks that at
    /// run time: called from a pool thread it traps (`_dispatch_assert_queue_fail`). The
    /// publisher made there calls its subscribers on the main actor.
    @MainActor
    @Test func sinkOnTheMainActor_receivesOnTheMainActor_withoutTrapping() async {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let done = Gate()
        var received: [Int] = []
        let cancellable = stream.publisher().sink(receiveCompletion: { _ in done.open() }) { value in
            received.append(value)  // main-actor state, no await: this closure is @MainActor
        }
        continuation.yield(1)
        continuation.yield(2)
        continuation.finish()
        await done.wait()
        #expect(received == [1, 2])
        cancellable.cancel()
    }

    // MARK: - Completion

    @Test func throwingSequence_completesWithItsFailure_exactlyOnce() async {
        let sequence = ProbeSequence(count: 10, failAt: 3)
        let subscriber = RecordingSubscriber<Int, any Error>(initialDemand: .unlimited)
        sequence.publisher().subscribe(subscriber)
        await subscriber.waitForCompletion()
        await sequence.probe.released.wait(untilAtLeast: 1)
        #expect(subscriber.inputs == [0, 1, 2])
        #expect(subscriber.completions.count == 1)
        if case .failure(let error) = subscriber.completions.first {
            #expect(error is Boom)
        } else {
            Issue.record("expected a failure, got \(subscriber.completions)")
        }
    }

    @Test func emptySequence_finishesWithoutDemand() async {
        let sequence = ProbeSequence(count: 0)
        let subscriber = RecordingSubscriber<Int, any Error>()  // never requests anything
        sequence.publisher().subscribe(subscriber)
        await subscriber.waitForCompletion()
        #expect(subscriber.inputs.isEmpty)
        #expect(subscriber.completions.count == 1)
    }

    // MARK: - Subscriptions

    @Test func eachSubscription_iteratesItsOwnIterator() async {
        let sequence = ProbeSequence(count: 10)
        let publisher = sequence.publisher()
        let first = RecordingSubscriber<Int, any Error>(initialDemand: .unlimited)
        let second = RecordingSubscriber<Int, any Error>(initialDemand: .unlimited)
        publisher.subscribe(first)
        publisher.subscribe(second)
        await first.waitForCompletion()
        await second.waitForCompletion()
        #expect(sequence.probe.iterators.value == 2)
        #expect(first.inputs == Array(0..<10))
        #expect(second.inputs == Array(0..<10))
    }

    @Test func neverFailingSequence_givesANeverFailingPublisher_andWorksWithSink() async {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        for value in 0..<5 { continuation.yield(value) }
        continuation.finish()
        let publisher: AnyPublisher<Int, Never> = stream.eraseToAnyPublisher()
        let received = LockedState<[Int]>([])
        let done = Gate()
        let cancellable = publisher.sink(
            receiveCompletion: { _ in done.open() }, receiveValue: { value in received.withLock { $0.append(value) } })
        await done.wait()
        #expect(received.withLock { $0 } == [0, 1, 2, 3, 4])
        cancellable.cancel()
    }

    @Test func worksWithOperators_prefixCancelsTheSequence() async {
        let sequence = ProbeSequence()  // infinite
        let subscriber = RecordingSubscriber<Int, any Error>(initialDemand: .unlimited)
        sequence.publisher().map { $0 * 10 }.prefix(3).subscribe(subscriber)
        await subscriber.waitForCompletion()
        await sequence.probe.released.wait(untilAtLeast: 1)  // prefix cancelled upstream
        #expect(subscriber.inputs == [0, 10, 20])
        #expect(subscriber.completions.count == 1)
    }
}

#endif
