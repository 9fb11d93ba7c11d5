import BridgesTesting
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct TestClockTests {
    // MARK: - Ordering

    @Test func advance_whenDeadlinesAreEqual_wakesInSchedulingOrder() async {
        let clock = TestClock()
        let log = Collected<String>()
        await withSerialTasks {
            for name in ["a", "b", "c", "d"] {
                Task {
                    try await clock.sleep(for: .seconds(1))
                    log.append("\(name)@\(clock.now)")
                }
                await runUntilIdle()  // each task is asleep before the next one starts
            }
            await clock.advance(by: .seconds(1))
            #expect(log.values == ["a@t+1.0 seconds", "b@t+1.0 seconds", "c@t+1.0 seconds", "d@t+1.0 seconds"])
            await clock.expectNoPendingSleepers()
        }
    }

    @Test func advance_whenDeadlinesDiffer_wakesInDeadlineOrderWithNowAtEachDeadline() async {
        let clock = TestClock()
        let log = Collected<String>()
        await withSerialTasks {
            for (name, ms) in [("late", 300), ("early", 100), ("middle", 200)] {
                Task {
                    try await clock.sleep(for: .milliseconds(ms))
                    log.append("\(name)@\(clock.now.offset)")
                }
            }
            await clock.advance(by: .milliseconds(250))
            #expect(log.values == ["early@0.1 seconds", "middle@0.2 seconds"])
            #expect(clock.now == TestClock.Instant(offset: .milliseconds(250)))
            await clock.advance(by: .milliseconds(50))
            #expect(log.values == ["early@0.1 seconds", "middle@0.2 seconds", "late@0.3 seconds"])
        }
    }

    /// Two interval timers (1 s and 1.5 s) advanced by 4 s at once, then in 1 s steps, then in
    /// 0.25 s steps: the same firings, in the same order, each seeing its own `now`.
    @Test(arguments: [[4000], [1000, 1000, 1000, 1000], Array(repeating: 250, count: 16)])
    func advance_inStepsOrAtOnce_firesTheSameWayWithItsOwnNow(steps: [Int]) async {
        let clock = TestClock()
        let log = Collected<String>()
        await withSerialTasks {
            let timers = [("1s", 1000, 4), ("1.5s", 1500, 2)].map { name, interval, count in
                Task {
                    for _ in 0..<count {
                        try await clock.sleep(for: .milliseconds(interval))
                        log.append("\(name)@\(clock.now.offset)")
                    }
                }
            }
            for step in steps { await clock.advance(by: .milliseconds(step)) }
            #expect(
                log.values == [
                    "1s@1.0 seconds", "1.5s@1.5 seconds", "1s@2.0 seconds", "1.5s@3.0 seconds", "1s@3.0 seconds",
                    "1s@4.0 seconds",
                ])
            for timer in timers { #expect(await timer.result.isSuccess) }
            await clock.expectNoPendingSleepers()
        }
    }

    @Test func advance_byLessThanTheDeadline_wakesNothing() async {
        let clock = TestClock()
        await withSerialTasks {
            let sleeper = Task { try await clock.sleep(for: .milliseconds(300)) }
            await clock.advance(by: .milliseconds(299))
            #expect(clock.pendingSleepers == [TestClock.Instant(offset: .milliseconds(300))])
            await clock.advance(by: .milliseconds(1))
            #expect(await sleeper.result.isSuccess)
        }
    }

    @Test func advance_withoutSerialTasks_wakesAfterHandshake() async throws {
        let clock = TestClock()
        let log = Collected<Int>()
        let sleeper = Task {
            try await clock.sleep(for: .seconds(1))
            log.append(1)
        }
        await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(1))
        try await sleeper.value
        #expect(log.values == [1])
    }

    // MARK: - Cancellation

    @Test func sleep_whenCancelled_throwsPromptlyAndLeavesTheClock() async {
        let clock = TestClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
        await clock.waitForSleepers(1)
        sleeper.cancel()
        let result = await sleeper.result  // no advance: cancellation alone resumes it
        #expect(result.error is CancellationError)
        #expect(clock.pendingSleepers.isEmpty)
        #expect(clock.now == TestClock.Instant())
    }

    @Test func sleep_whenAlreadyCancelled_throwsWithoutSleeping() async {
        let clock = TestClock()
        let sleeper = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(1))
        }
        #expect(await sleeper.result.error is CancellationError)
        #expect(clock.pendingSleepers.isEmpty)
    }

    @Test func sleep_untilThePast_returnsAtOnce() async throws {
        let clock = TestClock(now: TestClock.Instant(offset: .seconds(10)))
        try await clock.sleep(until: TestClock.Instant(offset: .seconds(3)))
        try await clock.sleep(for: .zero)
        #expect(clock.now.offset == .seconds(10))
    }

    // MARK: - run()

    @Test func run_advancesUntilNoSleeperIsLeft() async {
        let clock = TestClock()
        let log = Collected<String>()
        await withSerialTasks {
            Task {
                try await clock.sleep(for: .seconds(5))
                log.append("5")
                try await clock.sleep(for: .seconds(5))  // sleeps again after waking: run() follows
                log.append("10")
            }
            Task {
                try await clock.sleep(for: .seconds(2))
                log.append("2")
            }
            await clock.run()
            #expect(log.values == ["2", "5", "10"])
            #expect(clock.now.offset == .seconds(10))
            await clock.expectNoPendingSleepers()
        }
    }

    @Test func run_whenATimerRepeatsForever_failsInsteadOfHanging() async {
        let clock = TestClock(runLimit: 50)
        await withSerialTasks {
            let timer = Task { while true { try await clock.sleep(for: .seconds(1)) } }
            await withKnownIssue {
                await clock.run()
            }
            #expect(clock.now.offset == .seconds(50))
            timer.cancel()
            #expect(await timer.result.error is CancellationError)
        }
    }

    @Test func expectNoPendingSleepers_whenASleeperRemains_fails() async {
        let clock = TestClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
        await clock.waitForSleepers(1)
        await withKnownIssue {
            await clock.expectNoPendingSleepers()
        }
        sleeper.cancel()
        _ = await sleeper.result
    }

    @Test func advance_backwards_failsAndKeepsTime() async {
        let clock = TestClock(now: TestClock.Instant(offset: .seconds(2)))
        await withKnownIssue {
            await clock.advance(to: TestClock.Instant(offset: .seconds(1)))
        }
        #expect(clock.now.offset == .seconds(2))
    }

    // MARK: - ImmediateClock

    @Test func immediateClock_sleepReturnsAtOnceAndMovesNow() async throws {
        let clock: ImmediateClock = .immediate
        try await clock.sleep(for: .seconds(3600))
        try await clock.sleep(until: TestClock.Instant(offset: .seconds(10)))
        #expect(clock.now.offset == .seconds(3600))
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(1))
        }
        #expect(await cancelled.result.error is CancellationError)
    }

    @Test func clocks_workWhereAnyClockIsTaken() async throws {
        func wait(on clock: some Clock<Duration>) async throws { try await clock.sleep(for: .seconds(1)) }
        try await wait(on: ImmediateClock())
        let clock = TestClock()
        await withSerialTasks {
            let task = Task { try await wait(on: clock) }
            await clock.advance(by: .seconds(1))
            #expect(await task.result.isSuccess)
        }
    }
}

extension Result {
    var isSuccess: Bool { if case .success = self { true } else { false } }
    var error: Failure? { if case .failure(let error) = self { error } else { nil } }
}
