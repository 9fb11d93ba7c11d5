import BridgesTesting
import TestSupport
import Testing

@testable import Bridges

// `shared(replay:stopTimeout:)` against two references, re-expressed (not copied):
// - swift-async-algorithms 1.1.4, Tests/AsyncAlgorithmsTests/TestShare.swift (its scenarios: many
//   consumers, buffering policies, cancellation of one and of all, errors, a late consumer,
//   independent iterators, sequential consumers). Outcomes are exact here where theirs allowed
//   several, because each consumer has its own buffer; where the behaviour differs on purpose
//   (a restart after the end) the test says so.
// - Kotlin's documented `shareIn` / `SharingStarted.WhileSubscribed(stopTimeout)` semantics
//   (kotlinx.coroutines, kotlinx-coroutines-core/common/src/flow/operators/Share.kt and
//   SharingStarted.kt): started by the first subscriber, replay to new subscribers, stopped
//   after the stop timeout, restarted by a later subscriber.
@Suite("SharedSequence", .timeLimit(.minutes(3)))
struct SharedSequenceTests {
    // MARK: - Fan-out (TestShare: multiple consumers, single consumer, empty source)

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func everyConsumerReceivesEveryElement_inOrder_fromOneIteration() async throws {
        let upstream = DrivenUpstream<Never>()
        let shared = upstream.sequence.shared()
        let first = shared.stream().record()
        let second = shared.stream().record()
        let sink = await upstream.nextIteration()
        await shared.waitForSubscribers(2)
        for value in 1...5 { sink.yield(value) }
        sink.finish()
        #expect(await first.elementsAtFinish() == [1, 2, 3, 4, 5])
        #expect(await second.elementsAtFinish() == [1, 2, 3, 4, 5])
        #expect(upstream.log.values == ["start", "stop"])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func singleConsumer_andEmptyUpstream() async {
        var received: [Int] = []
        for await value in Numbers(upTo: 5).shared() { received.append(value) }
        #expect(received == [1, 2, 3, 4, 5])
        var none: [Int] = []
        for await value in Numbers(upTo: 0).shared() { none.append(value) }
        #expect(none == [])
    }

    /// The consumer that starts the iteration subscribes before the upstream's first pull: an
    /// upstream that answers at once (no suspension between elements) cannot run to its end on
    /// another thread while that consumer is still subscribing, and leave it nothing.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func theConsumerThatStartsTheIteration_receivesItsFirstElement_evenFromAnUpstreamThatNeverSuspends() async {
        struct Immediate: AsyncSequence, Sendable {
            struct AsyncIterator: AsyncIteratorProtocol {
                var last = 0
                mutating func next() async -> Int? {
                    guard last < 5 else { return nil }
                    last += 1
                    return last
                }
            }
            func makeAsyncIterator() -> AsyncIterator { AsyncIterator() }
        }
        var short: [[Int]] = []
        for _ in 0..<stressRounds(10_000) {
            var received: [Int] = []
            for await value in Immediate().shared() { received.append(value) }
            if received != [1, 2, 3, 4, 5] { short.append(received) }
        }
        #expect(short.isEmpty, "\(short.count) of 10 000 consumers missed elements: \(short.prefix(3))")
    }

    // MARK: - Policies, one per consumer (TestShare: bounded, unbounded, bufferingLatest, bufferingOldest)

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func eachConsumerGetsWhatItsOwnPolicyPromises_andAccountsForEveryElement() async throws {
        let upstream = DrivenUpstream<Never>()
        let shared = upstream.sequence.shared()
        let gate = Signal()
        /// Takes the first element, then nothing until the gate opens.
        func slow(_ policy: BufferingPolicy, _ dropped: Collected<Int>, tookFirst: Signal) -> Task<[Int], Never> {
            Task {
                var received: [Int] = []
                for await value in shared.stream(buffering: policy, onDrop: { dropped.append($0) }) {
                    received.append(value)
                    if received.count == 1 {
                        tookFirst.open()
                        await gate.wait()
                    }
                }
                return received
            }
        }
        let everything = shared.stream(buffering: .unbounded).record()
        let (latestDropped, oldestDropped, newestDropped) = (Collected<Int>(), Collected<Int>(), Collected<Int>())
        let (latestTook, oldestTook, newestTook) = (Signal(), Signal(), Signal())
        let latest = slow(.latest, latestDropped, tookFirst: latestTook)
        let oldest = slow(.dropNewest(2), oldestDropped, tookFirst: oldestTook)  // AsyncAlgorithms' bufferingOldest
        let newest = slow(.dropOldest(2), newestDropped, tookFirst: newestTook)  // AsyncAlgorithms' bufferingLatest
        let sink = await upstream.nextIteration()
        await shared.waitForSubscribers(4)
        sink.yield(1)
        await latestTook.wait()
        await oldestTook.wait()
        await newestTook.wait()
        for value in 2...5 { sink.yield(value) }
        sink.finish()
        #expect(await everything.elementsAtFinish() == [1, 2, 3, 4, 5])  // the slow ones held nobody back
        gate.open()
        #expect(await latest.value == [1, 5])
        #expect(latestDropped.values == [2, 3, 4])
        #expect(await oldest.value == [1, 2, 3])
        #expect(oldestDropped.values == [4, 5])
        #expect(await newest.value == [1, 4, 5])
        #expect(newestDropped.values == [2, 3])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func waitingConsumer_holdsTheUpstreamBack_pullingOnlyWhatItHasRoomFor() async throws {
        try await withSerialTasks { () async throws in
            let probe = NumbersProbe()
            let shared = Numbers(upTo: 20, probe: probe).shared()
            let gate = Signal()
            let slow = Task {
                var received: [Int] = []
                for await value in shared.stream(buffering: .suspending(2)) {
                    received.append(value)
                    if received.count == 1 { await gate.wait() }
                }
                return received
            }
            let lossy = shared.stream(buffering: .latest).record()
            await runUntilIdle()
            // One taken, two in its buffer: the upstream was not asked for a fourth.
            #expect(probe.pulls.value == 3)
            #expect(probe.stops.value == 0)
            gate.open()
            #expect(await slow.value == Array(1...20))
            #expect(await lossy.elementsAtFinish().last == 20)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func lossyConsumers_neverHoldTheUpstreamBack() async throws {
        try await withSerialTasks { () async throws in
            let probe = NumbersProbe()
            let shared = Numbers(upTo: 50, probe: probe).shared()
            let gate = Signal()
            let stalled = Task {
                var received: [Int] = []
                for await value in shared.stream(buffering: .latest) {
                    received.append(value)
                    if received.count == 1 { await gate.wait() }
                }
                return received
            }
            let dropping = shared.stream(buffering: .drop).record()
            await runUntilIdle()
            #expect(probe.pulls.value == 50, "the upstream ran to its end with every consumer stalled")
            #expect(probe.stops.value == 1)
            gate.open()
            #expect(await stalled.value == [1, 50])
            #expect(await dropping.elementsAtFinish().last != nil)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func accounting_everyElementSentToAConsumerIsDeliveredOrReported_underConcurrentProduction() async throws {
        for _ in 0..<stressRounds(20) {
            let upstream = DrivenUpstream<Never>()
            let shared = upstream.sequence.shared()
            let total = 2_000
            /// Delivered and undelivered elements of one consumer, sorted: must be 1...k, no gap.
            func consumer(
                _ policy: BufferingPolicy, leavingAfter limit: Int = .max
            ) -> (Task<Void, Never>, Collected<Int>) {
                let seen = Collected<Int>()
                let task = Task {
                    for await value in shared.stream(
                        buffering: policy, onUndelivered: { value, _ in seen.append(value) })
                    {
                        seen.append(value)
                        if value % 97 == 0 { await Task.yield() }
                        if value == limit { break }
                    }
                }
                return (task, seen)
            }
            let consumers = [
                consumer(.latest), consumer(.dropNewest(4)), consumer(.dropOldest(3)), consumer(.drop),
                consumer(.suspending(3)), consumer(.rendezvous), consumer(.unbounded),
                consumer(.unbounded, leavingAfter: 300),
            ]
            let sink = await upstream.nextIteration()
            await shared.waitForSubscribers(consumers.count)
            for value in 1...total { sink.yield(value) }
            sink.finish()
            for (task, _) in consumers { await task.value }
            for (index, (_, seen)) in consumers.enumerated() {
                let sorted = seen.values.sorted()
                let expected = index == consumers.count - 1 ? Array(1..<sorted.count + 1) : Array(1...total)
                #expect(sorted == expected, "consumer \(index): \(sorted.count) elements accounted for")
            }
            #expect(shared.consumerCount == 0)
            #expect(!shared.isIterating)
        }
    }

    // MARK: - Leaving (TestShare: cancellation of one consumer, of several, source cancelled without consumers)

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    /// The consumer's cancellation ends its stream from its own task (never inside the task's
    /// cancellation handler, which must not wait): its teardown cancels the upstream's iteration,
    /// which has stopped once the tasks have settled.
    @Test func lastConsumerCancelled_upstreamIterationIsCancelledByTheConsumersTeardown() async throws {
        try await withSerialTasks { () async throws in
            let upstream = DrivenUpstream<Never>()
            let shared = upstream.sequence.shared()
            let consumer = Task { for await _ in shared {} }
            let sink = await upstream.nextIteration()
            sink.yield(1)
            await runUntilIdle()  // the consumer waits for its next element, the upstream's task in next()
            consumer.cancel()
            upstream.log.append("cancel returned")
            await consumer.value
            await runUntilIdle()  // the iterating task, cancelled by the consumer's teardown, returns
            #expect(upstream.log.values == ["start", "cancel returned", "stop"])
            #expect(!shared.isIterating)
            guard case .terminated = sink.yield(2) else {  // the producer of a stopped iteration
                Issue.record("the stopped iteration's producer could still yield")
                return
            }
            sink.finish()
            #expect(shared.consumerCount == 0)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func oneOfTwoConsumersLeaves_theUpstreamRunsOnForTheOther_untilItLeavesToo() async throws {
        try await withSerialTasks { () async throws in
            let upstream = DrivenUpstream<Never>()
            let shared = upstream.sequence.shared()
            let first = shared.stream().record()
            let second = shared.stream().record()
            let sink = await upstream.nextIteration()
            await shared.waitForSubscribers(2)
            sink.yield(1)
            #expect(try await first.next() == 1)
            #expect(try await second.next() == 1)
            first.cancel()
            await first.waitForEnd()
            await runUntilIdle()
            #expect(upstream.log.values == ["start"])
            sink.yield(2)
            #expect(try await second.next() == 2)
            await runUntilIdle()
            second.cancel()
            upstream.log.append("cancel returned")
            await second.waitForEnd()
            #expect(upstream.log.values == ["start", "cancel returned", "stop"])
            sink.finish()
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func breakingOut_leavesAsCancellingDoes() async throws {
        let upstream = DrivenUpstream<Never>()
        let shared = upstream.sequence.shared()
        let consumer = Task {
            for await value in shared where value == 2 { return value }
            return -1
        }
        let sink = await upstream.nextIteration()
        await shared.waitForSubscribers(1)
        for value in 1...3 { sink.yield(value) }
        #expect(await consumer.value == 2)
        #expect(!shared.isIterating)  // the consumer's loop ended after its teardown stopped the upstream
        sink.finish()
    }

    // MARK: - The end of the upstream (TestShare: errors reach all consumers; sequential consumers)

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func upstreamFailure_reachesEveryConsumer_afterWhatEachBuffered_withItsType() async throws {
        let upstream = DrivenUpstream<TestError>()
        let shared: SharedSequence<Int, TestError> = upstream.sequence.shared()
        let first = shared.stream().record()
        let second = shared.stream(buffering: .suspending(4)).record()
        let sink = await upstream.nextIteration()
        await shared.waitForSubscribers(2)
        sink.yield(1)
        sink.yield(2)
        sink.finish(throwing: TestError(code: 3))
        await first.expectFailure(TestError(code: 3))
        await second.expectFailure(TestError(code: 3))
        #expect(first.elements == [1, 2])
        #expect(second.elements == [1, 2])
    }

    @Test func untypedForm_failsWithAnyError() async throws {
        let upstream = DrivenUpstream<TestError>()
        let shared: SharedSequence<Int, any Error> = upstream.sequence.shared()  // the overload below macOS 15
        let consumer = Task { () -> [Int] in
            var received: [Int] = []
            do {
                for try await value in shared { received.append(value) }
            } catch {
                #expect(error as? TestError == TestError(code: 9))
            }
            return received
        }
        let sink = await upstream.nextIteration()
        await shared.waitForSubscribers(1)
        sink.yield(1)
        sink.finish(throwing: TestError(code: 9))
        #expect(await consumer.value == [1])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func consumerAfterTheEnd_startsANewIteration() async {
        // TestShare's sequential consumers get nothing the second time (the base is iterated once
        // ever); here the second consumer iterates the upstream again.
        let probe = NumbersProbe()
        let shared = Numbers(upTo: 3, probe: probe).shared()
        var first: [Int] = []
        for await value in shared { first.append(value) }
        var second: [Int] = []
        for await value in shared { second.append(value) }
        #expect(first == [1, 2, 3])
        #expect(second == [1, 2, 3])
        #expect(probe.starts.value == 2)
    }

    // MARK: - Joining late, replay (TestShare: late-joining consumer; Kotlin: replay)

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func lateConsumer_receivesWhatIsSentAfterItJoined_orTheReplayFirst() async throws {
        for replay in [0, 1, 3] {
            let upstream = DrivenUpstream<Never>()
            let shared = upstream.sequence.shared(replay: replay)
            let early = shared.stream().record()
            let sink = await upstream.nextIteration()
            await shared.waitForSubscribers(1)
            sink.yield(1)
            sink.yield(2)
            #expect(try await early.next() == 1)
            #expect(try await early.next() == 2)
            let late = shared.stream().record()
            await shared.waitForSubscribers(2)
            for value in 3...5 { sink.yield(value) }
            sink.finish()
            #expect(await early.elementsAtFinish() == [1, 2, 3, 4, 5])
            #expect(await late.elementsAtFinish() == Array([1, 2].suffix(replay)) + [3, 4, 5], "replay: \(replay)")
            #expect(upstream.starts == 1)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func independentIterators_eachSeesEveryElement() async throws {
        // TestShare's iterator independence: two iterators of one shared sequence, interleaved.
        let upstream = DrivenUpstream<Never>()
        let shared = upstream.sequence.shared()
        func twoElementsAndTheEnd() -> Task<[Int?], Never> {
            Task {
                var iterator = shared.makeAsyncIterator()
                return [
                    await iterator.next(isolation: nil), await iterator.next(isolation: nil),
                    await iterator.next(isolation: nil),
                ]
            }
        }
        let firstA = twoElementsAndTheEnd()
        let secondA = twoElementsAndTheEnd()
        let sink = await upstream.nextIteration()
        await shared.waitForSubscribers(2)
        for value in 1...2 { sink.yield(value) }
        sink.finish()
        #expect(await firstA.value == [1, 2, nil])
        #expect(await secondA.value == [1, 2, nil])
    }

    // MARK: - Starting and stopping (Kotlin: SharingStarted.WhileSubscribed(stopTimeout))

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func nothingStarts_untilTheFirstConsumerIterates() async throws {
        try await withSerialTasks { () async throws in
            let upstream = DrivenUpstream<Never>()
            let shared = upstream.sequence.shared()
            let stream = shared.stream()
            await runUntilIdle()
            #expect(upstream.starts == 0)
            #expect(!shared.isIterating)
            let consumer = stream.record()
            let sink = await upstream.nextIteration()
            #expect(upstream.starts == 1)
            consumer.cancel()
            await consumer.waitForEnd()
            sink.finish()
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func stopTimeout_aConsumerBackWithinIt_joinsTheRunningIteration_otherwiseItStops() async throws {
        try await withSerialTasks { () async throws in
            let clock = TestClock()
            let upstream = DrivenUpstream<Never>()
            let shared = upstream.sequence.shared(replay: 1, stopTimeout: .after(.seconds(5), on: clock))
            let first = shared.stream().record()
            let sink = await upstream.nextIteration()
            await shared.waitForSubscribers(1)
            sink.yield(1)
            #expect(try await first.next() == 1)
            first.cancel()  // a screen rotation: the old screen leaves…
            await first.waitForEnd()
            await clock.advance(by: .milliseconds(4_999))
            #expect(upstream.log.values == ["start"])
            #expect(shared.isIterating)
            let second = shared.stream().record()  // …and the new one arrives within the timeout
            #expect(try await second.next() == 1)  // the replay of the running iteration
            await clock.expectNoPendingSleepers()  // its stop timer was cancelled
            sink.yield(2)
            #expect(try await second.next() == 2)
            #expect(upstream.starts == 1)
            second.cancel()
            await second.waitForEnd()
            await clock.advance(by: .milliseconds(4_999))
            #expect(upstream.log.values == ["start"])
            await clock.advance(by: .milliseconds(1))
            await runUntilIdle()
            #expect(upstream.log.values == ["start", "stop"])
            #expect(!shared.isIterating)
            // Kotlin restarts a stopped upstream for a new subscriber; the replay belongs to the
            // stopped iteration here (Kotlin keeps it unless `replayExpiration` says otherwise).
            let third = shared.stream().record()
            let restarted = await upstream.nextIteration()
            await shared.waitForSubscribers(1)
            restarted.yield(10)
            #expect(try await third.next() == 10)
            #expect(upstream.starts == 2)
            third.cancel()
            await third.waitForEnd()
            await clock.advance(by: .seconds(5))
            await runUntilIdle()
            #expect(upstream.stops == 2)
            await clock.expectNoPendingSleepers()
            sink.finish()
            restarted.finish()
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func upstreamEndsDuringTheStopTimeout_theTimerIsCancelled_andTheNextConsumerRestarts() async throws {
        try await withSerialTasks { () async throws in
            let clock = TestClock()
            let upstream = DrivenUpstream<Never>()
            let shared = upstream.sequence.shared(stopTimeout: .after(.seconds(5), on: clock))
            let first = shared.stream().record()
            let sink = await upstream.nextIteration()
            first.cancel()
            await first.waitForEnd()
            await runUntilIdle()
            #expect(clock.pendingSleepers.count == 1)
            sink.finish()
            await runUntilIdle()
            await clock.expectNoPendingSleepers()
            #expect(!shared.isIterating)
            let second = shared.stream().record()
            let restarted = await upstream.nextIteration()
            #expect(upstream.starts == 2)
            second.cancel()
            await second.waitForEnd()
            restarted.finish()
        }
    }

    // MARK: - Races and lifetimes

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func racingJoinAndLeave_everyIterationStarted_isStopped_beforeTheLastConsumerEnds() async {
        let probe = NumbersProbe()
        let shared = Numbers(probe: probe).shared()  // never ends by itself
        let rounds = 2_000
        for round in 0..<rounds {
            let first = Task.detached { for await value in shared.stream(buffering: .latest) where value > 0 { break } }
            let second = Task.detached { for await _ in shared.stream(buffering: .latest) {} }
            if round % 3 == 1 { await Task.yield() }
            second.cancel()
            await first.value
            await second.value
            // Both loops ended after their teardowns: the last one's stopped the iteration.
            #expect(!shared.isIterating, "round \(round)")
            #expect(shared.consumerCount == 0, "round \(round)")
            // Each iteration started so far ends (its task returns and releases its iterator).
            // An iteration task cancelled before it ran starts (and at once ends) later.
            await probe.waitForStops(probe.starts.value)
        }
        // Every iteration ever started ends (an upstream left running would hang here until the
        // suite's time limit fails the test).
        var (started, stopped) = (0, 0)
        repeat {
            started = probe.starts.value
            await probe.waitForStops(started)
            stopped = probe.stops.value
        } while stopped != started || probe.starts.value != started
        #expect(stopped == started)
        // One iteration per round, or two when the first consumer left before the second joined.
        #expect((rounds...(2 * rounds)).contains(probe.starts.value))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func afterTheLastConsumerLeaves_nothingIsLeftAlive() async throws {
        try await withSerialTasks { () async throws in
            let upstream = DrivenUpstream<Never>()
            weak var weakShared: SharedSequence<Int, Never>?
            weak var weakBroadcast: ThrowingBroadcast<Int, Never>?
            do {
                let shared = upstream.sequence.shared(replay: 2)
                weakShared = shared
                let consumer = shared.stream(buffering: .suspending(1)).record()
                let sink = await upstream.nextIteration()
                weakBroadcast = shared.state.withLock { $0.fanout }
                await shared.waitForSubscribers(1)
                sink.yield(1)
                #expect(try await consumer.next() == 1)
                consumer.cancel()
                await consumer.waitForEnd()
                sink.finish()
            }
            await runUntilIdle()
            #expect(upstream.log.values == ["start", "stop"])
            #expect(upstream.live.value == 0)
            #expect(weakBroadcast == nil)
            #expect(weakShared == nil)
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func releasingTheSharedSequenceDuringItsStopTimeout_stopsTheUpstream() async throws {
        try await withSerialTasks { () async throws in
            let clock = TestClock()
            let upstream = DrivenUpstream<Never>()
            weak var weakShared: SharedSequence<Int, Never>?
            let sink: DrivenUpstream<Never>.Sink
            do {
                let shared = upstream.sequence.shared(stopTimeout: .after(.seconds(60), on: clock))
                weakShared = shared
                let consumer = shared.stream().record()
                sink = await upstream.nextIteration()
                consumer.cancel()
                await consumer.waitForEnd()
                await runUntilIdle()
                upstream.log.append("left")
            }
            await runUntilIdle()
            #expect(weakShared == nil)
            #expect(
                upstream.log.values == ["start", "left", "stop"],
                "stopped when released, not when the last consumer left")
            #expect(upstream.live.value == 0)
            await clock.expectNoPendingSleepers()
            sink.finish()
        }
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func failureTypes_followTheUpstream() {
        let never = Numbers(upTo: 1).shared()
        #expect(type(of: never) == SharedSequence<Int, Never>.self)
        let typed = CallbackStream<Int, TestError> { _ in Cancellation() }.shared()
        #expect(type(of: typed) == SharedSequence<Int, TestError>.self)
        let untyped: SharedSequence<Int, any Error> = Numbers(upTo: 1).shared()
        #expect(type(of: untyped) == SharedSequence<Int, any Error>.self)
    }
}
