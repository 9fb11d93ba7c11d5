import Bridges
import BridgesTesting
import TestSupport
import Testing

/// `mapLatest` and `collectLatest`: cancel-previous, exactly once, no stale result.
@Suite(.timeLimit(.minutes(3))) struct MapLatestTests {
    // MARK: - Cancel-previous

    @available(BridgesTypedSequence, *)
    @Test func newElement_cancelsThePreviousTransform_andItsResultIsNeverEmitted() async throws {
        let clock = TestClock()
        let probe = StreamProbe()
        let box = SinkBox<String, Never>()
        let cancelled = Collected<String>()
        try await withBridgesDiagnosticsAsFailures { () async throws in
            try await withSerialTasks { () async throws in
                let searched = CallbackStream<String, Never>.probed(probe, box: box).mapLatest { query -> String in
                    do {
                        try await clock.sleep(for: .seconds(1))  // the "search"
                        return query.uppercased()
                    } catch {
                        cancelled.append(query)
                        return "stale \(query)"  // ignores cancellation: must still be dropped
                    }
                }
                let output = searched.record()
                await box.ready.wait()
                box.sink.yield("a")
                await runUntilIdle()
                box.sink.yield("ab")
                await runUntilIdle()
                #expect(cancelled.values == ["a"])
                await clock.advance(by: .milliseconds(999))
                await output.expectNoMoreElements()
                await clock.advance(by: .milliseconds(1))
                #expect(try await output.next() == "AB")
                box.sink.finish()
                box.clear()
                await output.expectFinished()
                #expect(output.elements == ["AB"])
                await clock.expectNoPendingSleepers()
            }
        }
        #expect(cancelled.values == ["a"])
        #expect(probe.teardowns.value == 1)
        await probe.proxyReleased.wait()
    }

    @available(BridgesTypedSequence, *)
    @Test func upstreamFinishes_whileATransformRuns_itsResultIsEmittedBeforeTheEnd() async throws {
        let clock = TestClock()
        try await withSerialTasks { () async throws in
            let (input, continuation) = AsyncStream.makeStream(of: Int.self)
            let output = input.mapLatest { value -> Int in
                try? await clock.sleep(for: .seconds(1))
                return value * 10
            }.record()
            continuation.yield(1)
            continuation.yield(2)
            continuation.finish()
            await runUntilIdle()
            await output.expectNoMoreElements()
            await clock.advance(by: .seconds(1))
            #expect(try await output.next() == 20)
            await output.expectFinished()
            #expect(output.elements == [20])
        }
    }

    @available(BridgesTypedSequence, *)
    @Test func consumerCancelled_cancelsTheRunningTransform_andTheUpstreamOnce() async throws {
        let probe = StreamProbe()
        let box = SinkBox<Int, Never>()
        let transformCancelled = Signal()
        try await withSerialTasks { () async throws in
            let output = CallbackStream<Int, Never>.probed(probe, box: box).mapLatest { value -> Int in
                try? await suspendUntilCancelled()
                transformCancelled.open()
                return value
            }.record()
            await box.ready.wait()
            box.sink.yield(1)
            await runUntilIdle()
            output.cancel()
            await transformCancelled.wait()
            await output.waitForEnd()
            #expect(output.elements == [])
            box.clear()
        }
        #expect(probe.teardowns.value == 1)
        await probe.proxyReleased.wait()
    }

    // MARK: - Failures

    @available(BridgesTypedSequence, *)
    @Test func throwingTransform_errorOfTheCurrentTransformEndsTheStream() async throws {
        try await withSerialTasks { () async throws in
            let (input, continuation) = AsyncStream.makeStream(of: Int.self)
            let output = input.mapLatest { value throws -> Int in
                if value == 2 { throw TestError(code: 2) }
                return value
            }.record()
            continuation.yield(1)
            #expect(try await output.next() == 1)
            continuation.yield(2)
            await output.expectFailure(TestError(code: 2))
            #expect(output.elements == [1])
            continuation.finish()
        }
    }

    @available(BridgesTypedSequence, *)
    @Test func throwingTransform_cancelledByANewerElement_isNotAnError() async throws {
        try await withSerialTasks { () async throws in
            let (input, continuation) = AsyncStream.makeStream(of: Int.self)
            let output = input.mapLatest { value throws -> Int in
                if value == 1 { try await suspendUntilCancelled() }  // throws CancellationError when superseded
                return value
            }.record()
            continuation.yield(1)
            await runUntilIdle()
            continuation.yield(2)
            continuation.finish()
            #expect(try await output.next() == 2)
            await output.expectFinished()
            #expect(output.elements == [2])
        }
    }

    @available(BridgesTypedSequence, *)
    @Test func upstreamFailure_cancelsTheTransform_andIsRethrownWithItsType() async throws {
        let box = SinkBox<Int, TestError>()
        let transformCancelled = Signal()
        let mapped: CallbackStream<Int, TestError> = CallbackStream<Int, TestError>.probed(StreamProbe(), box: box)
            .mapLatest { value -> Int in
                try? await suspendUntilCancelled()
                transformCancelled.open()
                return value
            }
        try await withSerialTasks { () async throws in
            let consumer = Task { () async -> TestError? in
                do throws(TestError) {
                    for try await _ in mapped {}
                    return nil
                } catch {
                    return error
                }
            }
            await box.ready.wait()
            box.sink.yield(1)
            await runUntilIdle()
            box.sink.finish(throwing: TestError(code: 9))
            await transformCancelled.wait()
            #expect(await consumer.value == TestError(code: 9))
            box.clear()
        }
    }

    // MARK: - Races (real threads, many iterations)

    /// Elements arrive while transforms finish: never a result of an older element after a newer
    /// one's, each at most once, and the last element's result always arrives.
    @available(BridgesTypedSequence, *)
    @Test func racingTransforms_neverEmitAStaleResult_andTheLastResultAlwaysArrives() async {
        for _ in 0..<500 {
            let (input, continuation) = AsyncStream.makeStream(of: Int.self)
            let mapped = input.mapLatest { value -> Int in
                await Task.yield()
                return value
            }
            let consumer = Task {
                var seen: [Int] = []
                for await value in mapped { seen.append(value) }
                return seen
            }
            let producer = Task.detached {
                for value in 0..<20 { continuation.yield(value) }
                continuation.finish()
            }
            await producer.value
            let seen = await consumer.value
            #expect(seen.last == 19)
            #expect(seen == seen.sorted() && Set(seen).count == seen.count)
        }
    }

    /// The consumer is cancelled at an arbitrary point: the upstream is torn down exactly once,
    /// and every transform that started has ended (none is left running).
    ///
    /// "Every transform that started" is counted once nothing can start one any more: when the
    /// transform closure itself has been released, by the stream and by every task that held it.
    /// (Counting against `started` read right after the teardown raced with a transform task the
    /// upstream loop had created just before it: that failed once under TSan in CI.) A transform
    /// left running keeps its closure, so this test would then hit its time limit.
    @available(BridgesTypedSequence, *)
    @Test func consumerCancelledAtAnyPoint_tearsDownOnce_andLeavesNoTransformRunning() async {
        for round in 0..<300 {
            let probe = StreamProbe()
            let box = SinkBox<Int, Never>()
            let started = Counter()
            let ended = Counter()
            let (consumer, transformReleased) = Self.consumeMapLatest(
                of: probe, box: box, started: started, ended: ended)
            await box.ready.wait()
            let producer = Task.detached {
                for value in 0..<(round % 7) { box.sink.yield(value) }
            }
            consumer.cancel()
            await producer.value
            await consumer.value
            await probe.tornDown.wait()
            box.clear()
            await transformReleased.wait()
            #expect(ended.value == started.value, "round \(round): a transform that started never ended")
            #expect(probe.teardowns.value == 1)
            await probe.proxyReleased.wait()
        }
    }

    /// A consumer task iterating `probed.mapLatest`, whose transform counts its starts and ends.
    /// The returned signal opens when the transform closure is released: only the stream and the
    /// operator's tasks hold it (its canary is not kept here).
    @available(BridgesTypedSequence, *)
    static func consumeMapLatest(
        of probe: StreamProbe, box: SinkBox<Int, Never>, started: Counter, ended: Counter
    ) -> (consumer: Task<Void, Never>, transformReleased: Signal) {
        let released = Signal()
        let canary = Canary(released: released)
        let mapped = CallbackStream<Int, Never>.probed(probe, box: box).mapLatest { value -> Int in
            _ = canary
            started.increment()
            try? await suspendUntilCancelled()
            ended.increment()
            return value
        }
        return (Task { for await _ in mapped {} }, released)
    }

    // MARK: - collectLatest

    @available(BridgesTypedSequence, *)
    @Test func collectLatest_runsTheActionForTheNewestElement_cancellingTheOlder() async throws {
        let clock = TestClock()
        let completed = Collected<Int>()
        let cancelled = Collected<Int>()
        try await withSerialTasks { () async throws in
            let (input, continuation) = AsyncStream.makeStream(of: Int.self)
            let loop = Task {
                await input.collectLatest { value in
                    do {
                        try await clock.sleep(for: .seconds(1))
                        completed.append(value)
                    } catch {
                        cancelled.append(value)
                    }
                }
            }
            continuation.yield(1)
            await runUntilIdle()
            continuation.yield(2)
            await runUntilIdle()
            continuation.finish()
            await clock.advance(by: .seconds(1))
            await loop.value
        }
        #expect(completed.values == [2])
        #expect(cancelled.values == [1])
    }

    @available(BridgesClock, *)
    @Test func collectLatestWeak_ownerReleased_endsTheLoopAndTearsTheSourceDown() async throws {
        let probe = StreamProbe()
        let box = SinkBox<String, Never>()
        weak var released: SearchOwner?
        try await withSerialTasks { () async throws in
            var owner: SearchOwner? = SearchOwner()
            released = owner
            CallbackStream<String, Never>.probed(probe, box: box)
                .collectLatest(weak: owner!, in: owner!.bag) { owner, query in owner.searched.append(query) }
            await box.ready.wait()
            box.sink.yield("a")
            await runUntilIdle()
            #expect(owner?.searched.values == ["a"])
            owner = nil  // the view model goes away: its bag cancels the loop
            await probe.tornDown.wait()
            box.clear()
        }
        #expect(released == nil)
        #expect(probe.teardowns.value == 1)
        await probe.proxyReleased.wait()
    }

    /// An action that is running holds the owner (it received it strongly): releasing the owner
    /// elsewhere does not end it or cancel it. Once it returns, the owner goes, its bag ends the
    /// loop and tears the source down, and no further action starts.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func collectLatestWeak_ownerReleasedWhileTheActionRuns_isHeldUntilTheActionReturns_thenTheLoopEnds()
        async throws
    {
        let probe = StreamProbe()
        let box = SinkBox<String, Never>()
        let started = Signal()
        let release = Signal()
        let actions = Collected<String>()
        let sawCancellation = Collected<Bool>()
        weak var released: SearchOwner?
        var owner: SearchOwner? = SearchOwner()
        released = owner
        CallbackStream<String, Never>.probed(probe, box: box)
            .collectLatest(weak: owner!, in: owner!.bag) { _, query in
                actions.append(query)
                started.open()
                await release.wait()
                sawCancellation.append(Task.isCancelled)
            }
        await box.ready.wait()
        box.sink.yield("a")
        await started.wait()
        owner = nil
        #expect(released != nil, "the running action holds its owner")
        #expect(probe.teardowns.value == 0)
        release.open()
        await probe.tornDown.wait()  // the action returned, the owner went, its bag ended the loop
        #expect(released == nil)
        #expect(sawCancellation.values == [false], "the action ran to its end")
        #expect(box.sink.yield("b") == .terminated)
        #expect(actions.values == ["a"])
        box.clear()
        await probe.proxyReleased.wait()
        #expect(probe.teardowns.value == 1)
    }

    /// The action borrows the owner for its call (like `forEach(weak:)`), so a running action is
    /// stopped by the bag (`cancelAll()`, or the owner's death once no action holds it).
    @available(BridgesClock, *)
    @Test func collectLatestWeak_bagCancelled_cancelsTheRunningActionAndTearsTheSourceDown() async throws {
        let probe = StreamProbe()
        let box = SinkBox<String, Never>()
        let actionCancelled = Signal()
        weak var released: SearchOwner?
        try await withSerialTasks { () async throws in
            let owner = SearchOwner()
            released = owner
            CallbackStream<String, Never>.probed(probe, box: box)
                .collectLatest(weak: owner, in: owner.bag) { owner, query in
                    owner.searched.append(query)
                    if query == "ab" {
                        try? await suspendUntilCancelled()
                        actionCancelled.open()
                    }
                }
            await box.ready.wait()
            box.sink.yield("a")
            await runUntilIdle()
            box.sink.yield("ab")
            await runUntilIdle()
            #expect(owner.searched.values == ["a", "ab"])
            owner.bag.cancelAll()
            await actionCancelled.wait()
            await probe.tornDown.wait()
            box.clear()
        }
        #expect(released == nil)
        #expect(probe.teardowns.value == 1)
        await probe.proxyReleased.wait()
    }
}

/// A view model stand-in: records what it searched; its bag ends its loops when it goes away.
final class SearchOwner: Sendable {
    let searched = Collected<String>()
    let bag = CancellationBag()
}
