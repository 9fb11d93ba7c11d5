import BridgesTesting
import TestSupport
import Testing

/// TestClock advanced from several tasks at once, cancelled advancers, and FIFO for equal deadlines.
@Suite(.timeLimit(.minutes(3))) struct TestClockConcurrencyTests {
    // MARK: - Concurrent advance

    /// Two tasks advance by 5 s each, at the same time, on real threads: the advances take turns,
    /// so time ends at 10 s (not 5 s, as when both computed their target from the same `now`),
    /// and the ten sleepers wake once each. (Outside `withSerialTasks`, what a woken task does
    /// after `sleep` returns races with the next wake-up, so only who woke is asserted here; the
    /// scoped test below asserts order and `now`.)
    // Without turns the two advancers could wait on each other's handshakes forever: the suite's time limit catches it.
    @Test
    func advance_fromTwoTasksAtOnce_takesTurns() async {
        for _ in 0..<100 {
            let clock = TestClock()
            let log = Collected<Int>()
            let sleepers = (1...10).map { second in
                Task {
                    try await clock.sleep(until: TestClock.Instant(offset: .seconds(second)))
                    log.append(second)
                }
            }
            await clock.waitForSleepers(10)
            async let first: Void = clock.advance(by: .seconds(5))
            async let second: Void = clock.advance(by: .seconds(5))
            _ = await (first, second)
            #expect(clock.now == TestClock.Instant(offset: .seconds(10)))
            for sleeper in sleepers { #expect(await sleeper.result.isSuccess) }
            #expect(log.values.sorted() == Array(1...10))
            #expect(clock.pendingSleepers.isEmpty)
        }
    }

    /// `advance(to:)` and `run()` from two tasks inside a scope: deterministic, every wake-up
    /// in order, and `run()` holds the turn for its whole run.
    @Test func advanceAndRun_concurrently_wakeEverySleeperInOrder() async {
        let clock = TestClock()
        let log = Collected<String>()
        await withSerialTasks {
            for second in [3, 1, 2, 5, 4] {
                Task {
                    try await clock.sleep(for: .seconds(second))
                    log.append("\(second)@\(clock.now.offset)")
                }
            }
            await runUntilIdle()
            async let advancer: Void = clock.advance(to: TestClock.Instant(offset: .seconds(2)))
            async let runner: Void = clock.run()
            _ = await (advancer, runner)
            #expect(
                log.values == ["1@1.0 seconds", "2@2.0 seconds", "3@3.0 seconds", "4@4.0 seconds", "5@5.0 seconds"])
            #expect(clock.now.offset == .seconds(5))
        }
    }

    // MARK: - Cancelled advancer

    /// The sleeper at 2 s cancels the task advancing to 5 s when it wakes. The advancer finishes
    /// that wake-up and stops: `now` is 2 s, the sleepers at 3, 4, 5 s still sleep, and the
    /// clock works on: the next advance wakes them in order, each at its own `now`.
    @Test func advance_whenCancelledMidway_stopsAtTheLastWakeUpAndStaysConsistent() async {
        let clock = TestClock()
        let log = Collected<String>()
        await withSerialTasks {
            let advancerBox = Collected<Task<Void, Never>>()
            for second in 1...5 {
                Task {
                    try await clock.sleep(for: .seconds(second))
                    log.append("\(second)@\(clock.now.offset)")
                    if second == 2 { advancerBox.values.first?.cancel() }
                }
            }
            await runUntilIdle()
            let advancer = Task { await clock.advance(to: TestClock.Instant(offset: .seconds(5))) }
            advancerBox.append(advancer)
            await advancer.value
            #expect(log.values == ["1@1.0 seconds", "2@2.0 seconds"])
            #expect(clock.now.offset == .seconds(2))
            #expect(clock.pendingSleepers.map(\.offset) == [.seconds(3), .seconds(4), .seconds(5)])
            await clock.advance(by: .seconds(3))
            #expect(
                log.values == ["1@1.0 seconds", "2@2.0 seconds", "3@3.0 seconds", "4@4.0 seconds", "5@5.0 seconds"])
            await clock.expectNoPendingSleepers()
        }
    }

    /// An advancer cancelled while it waits for its turn returns without advancing, and leaves
    /// the turn to the next one.
    @Test func advance_whenCancelledWhileWaitingForItsTurn_doesNothing() async {
        let clock = TestClock()
        let log = Collected<String>()
        await withSerialTasks {
            Task {
                try await clock.sleep(for: .seconds(1))
                // The advance that woke this holds the turn: a second advancer has to wait.
                let late = Task { await clock.advance(by: .seconds(100)) }
                await runUntilIdle()
                late.cancel()
                await late.value
                log.append("late advancer returned at \(clock.now.offset)")
            }
            await runUntilIdle()
            await clock.advance(by: .seconds(1))
            // The woken task's own runUntilIdle() and this advance's settling both see the scope
            // idle at once, and either may return first: wait for the task's line, not for idle.
            await log.wait(count: 1)
            #expect(log.values == ["late advancer returned at 1.0 seconds"])
            #expect(clock.now.offset == .seconds(1))
            await clock.advance(by: .seconds(1))  // the turn was handed back: this advance runs
            #expect(clock.now.offset == .seconds(2))
        }
    }

    /// Without a scope, on real threads: cancel the advancer at random points, many times; the
    /// clock is consistent every time (no sleeper due at or before `now`, every woken sleeper
    /// woke once) and a final advance wakes the rest.
    @Test func advance_cancelledAtRandomPoints_leavesTheClockConsistent() async {
        for iteration in 0..<200 {
            let clock = TestClock()
            let log = Collected<Int>()
            let sleepers = (1...8).map { second in
                Task {
                    try await clock.sleep(until: TestClock.Instant(offset: .seconds(second)))
                    log.append(second)
                }
            }
            await clock.waitForSleepers(8)
            let advancer = Task { await clock.advance(to: TestClock.Instant(offset: .seconds(8))) }
            if iteration % 2 == 0 { await Task.yield() }
            advancer.cancel()
            await advancer.value
            let now = clock.now
            #expect(clock.pendingSleepers.allSatisfy { $0 > now })
            await clock.advance(to: TestClock.Instant(offset: .seconds(8)))
            for sleeper in sleepers { #expect(await sleeper.result.isSuccess) }
            #expect(log.values.sorted() == Array(1...8))
            #expect(clock.pendingSleepers.isEmpty)
        }
    }

    // MARK: - FIFO for equal deadlines

    /// 50 sleepers with the same deadline, registered one after another, wake in exactly that
    /// order; sleepers at other deadlines interleaved between them keep deadline order.
    @Test func advance_whenManyDeadlinesAreEqual_wakesFirstInFirstOut() async {
        let clock = TestClock()
        let log = Collected<String>()
        await withSerialTasks {
            for index in 0..<50 {
                let deadline: Duration = index % 5 == 4 ? .seconds(2) : .seconds(1)
                Task {
                    try await clock.sleep(for: deadline)
                    log.append("\(index)")
                }
                await runUntilIdle()  // registered before the next one starts
            }
            await clock.run()
            let ones = (0..<50).filter { $0 % 5 != 4 }.map(String.init)
            let twos = (0..<50).filter { $0 % 5 == 4 }.map(String.init)
            #expect(log.values == ones + twos)
        }
    }
}
