import Bridges
import BridgesTesting
import TestSupport
import Testing

/// `debounce(for:clock:buffering:)` on a `TestClock`: no real time passes.
@Suite(.timeLimit(.minutes(3))) struct DebounceTests {
    // MARK: - Timing

    @available(BridgesTypedSequence, *)
    @Test func elementSentAtZero_isNotEmittedAt299ms_andIsAt300ms() async throws {
        let clock = TestClock()
        let probe = StreamProbe()
        let box = SinkBox<String, Never>()
        try await withBridgesDiagnosticsAsFailures { () async throws in
            try await withSerialTasks { () async throws in
                let debounced = CallbackStream<String, Never>.probed(probe, box: box).debounce(
                    for: .milliseconds(300), clock: clock, buffering: .unbounded)
                let output = debounced.record()
                await box.ready.wait()
                box.sink.yield("1")
                await clock.advance(by: .milliseconds(100))
                box.sink.yield("12")  // restarts the window: "1" is never emitted
                await clock.advance(by: .milliseconds(299))
                await output.expectNoMoreElements()
                // one timer: "12" moved its deadline
                #expect(clock.pendingSleepers == [TestClock.Instant(offset: .milliseconds(400))])
                await clock.advance(by: .milliseconds(1))
                #expect(try await output.next() == "12")
                box.sink.yield("123")
                await clock.advance(by: .milliseconds(300))
                #expect(try await output.next() == "123")
                box.sink.finish()
                box.clear()
                await output.expectFinished()
                #expect(output.elements == ["12", "123"])
                await clock.expectNoPendingSleepers()
            }
        }
        #expect(probe.teardowns.value == 1)
        await probe.proxyReleased.wait()
    }

    // MARK: - End of the upstream

    @available(BridgesTypedSequence, *)
    @Test func upstreamFinishes_pendingElementIsEmittedAtOnce_thenTheStreamFinishes() async throws {
        let clock = TestClock()
        try await withSerialTasks { () async throws in
            let (input, continuation) = AsyncStream.makeStream(of: Int.self)
            let output = input.debounce(for: .seconds(1), clock: clock, buffering: .unbounded).record()
            continuation.yield(1)
            continuation.yield(2)
            continuation.finish()
            #expect(try await output.next() == 2)
            await output.expectFinished()
            #expect(output.elements == [2])  // the last value is never lost
            #expect(clock.now == TestClock.Instant())  // and no time had to pass
            await clock.expectNoPendingSleepers()
        }
    }

    @available(BridgesTypedSequence, *)
    @Test func upstreamFails_pendingElementIsDropped_andTheFailureIsRethrown() async throws {
        let clock = TestClock()
        try await withSerialTasks { () async throws in
            let (input, continuation) = AsyncThrowingStream.makeStream(of: Int.self, throwing: (any Error).self)
            let output = input.debounce(for: .seconds(1), clock: clock, buffering: .unbounded).record()
            continuation.yield(1)
            continuation.finish(throwing: TestError(code: 7))
            await output.expectFailure(TestError(code: 7))
            #expect(output.elements == [])
            await clock.expectNoPendingSleepers()
        }
    }

    @available(BridgesTypedSequence, *)
    @Test func typedFailureKeepsItsType() async throws {
        let clock = TestClock()
        let box = SinkBox<Int, TestError>()
        let debounced: CallbackStream<Int, TestError> = CallbackStream<Int, TestError>.probed(StreamProbe(), box: box)
            .debounce(for: .seconds(1), clock: clock, buffering: .unbounded)
        try await withSerialTasks { () async throws in
            let consumer = Task { () async -> TestError? in
                do throws(TestError) {
                    for try await _ in debounced {}
                    return nil
                } catch {
                    return error  // statically a TestError
                }
            }
            await box.ready.wait()
            box.sink.finish(throwing: TestError(code: 3))
            #expect(await consumer.value == TestError(code: 3))
        }
    }

    // MARK: - Cancellation

    @available(BridgesTypedSequence, *)
    @Test func consumerCancelled_cancelsTheTimerAndTearsTheUpstreamDownOnce() async throws {
        let clock = TestClock()
        let probe = StreamProbe()
        let box = SinkBox<Int, Never>()
        try await withSerialTasks { () async throws in
            let output = CallbackStream<Int, Never>.probed(probe, box: box).debounce(
                for: .seconds(1), clock: clock, buffering: .unbounded
            )
            .record()
            await box.ready.wait()
            box.sink.yield(1)
            await runUntilIdle()
            #expect(clock.pendingSleepers.count == 1)
            output.cancel()
            await output.waitForEnd()
            await clock.expectNoPendingSleepers()
            box.clear()
            await probe.tornDown.wait()
        }
        #expect(probe.teardowns.value == 1)
        await probe.proxyReleased.wait()
    }

    // MARK: - Races

    /// The timer firing races with a new element and with the upstream's end, on real threads:
    /// whatever wins, elements leave in order, each at most once, and the last one always leaves.
    @available(BridgesTypedSequence, *)
    @Test func timerRacesNewElementsAndTheEnd_outputIsOrdered_andEndsWithTheLastElement() async throws {
        for _ in 0..<300 {
            let clock = TestClock()
            let (input, continuation) = AsyncStream.makeStream(of: Int.self)
            let debounced = input.debounce(for: .milliseconds(1), clock: clock, buffering: .unbounded)
            let consumer = Task {
                var seen: [Int] = []
                for await value in debounced { seen.append(value) }
                return seen
            }
            let advancer = Task.detached {
                for _ in 0..<20 { await clock.advance(by: .milliseconds(1)) }
            }
            for value in 0..<20 { continuation.yield(value) }
            await advancer.value
            continuation.finish()
            let seen = await consumer.value
            #expect(seen.last == 19)
            #expect(seen == seen.sorted() && Set(seen).count == seen.count)
        }
    }
}
