import Bridges
import BridgesTesting
import Clocks
import ConcurrencyExtras
import Testing

/// BridgesTesting's scopes and Point-Free's tools in one process, one after the other in every
/// order, many rounds: each finds the process as it expects it. (They cannot overlap in time:
/// `overlap_…` shows that each overlap is reported by name.)
@Suite(.serialized) struct InteropTests {
    @Test(arguments: 0..<rounds) func round(_ round: Int) async throws {
        #expect(enqueueHook() == nil)
        await parallelScopesWithMainActorWork(round)
        #expect(enqueueHook() == nil)
        await mainSerialExecutorScenarios()
        #expect(enqueueHook() == nil)
        #expect(!uncheckedUseMainSerialExecutor)
        #expect(await !detachedTaskRunsOnMainQueue())
        await pointFreeTestClockInAScope()
        await pointFreeTestClockOnTheMainSerialExecutor()
        try await bridgesDebounceOnPointFreeTestClock()
        #expect(enqueueHook() == nil)
    }

    @MainActor @Test func overlap_scopeInsideWithMainSerialExecutor_isReportedByName() async {
        await withKnownIssue {
            await withMainSerialExecutor {
                await withSerialTasks { await runUntilIdle() }
            }
        } matching: { issue in
            String(describing: issue).contains("withMainSerialExecutor")
        }
        #expect(enqueueHook() == nil)
        #expect(await !detachedTaskRunsOnMainQueue())
    }

    @MainActor @Test func overlap_withMainSerialExecutorInsideAScope_isReportedByName() async {
        await withKnownIssue {
            await withSerialTasks {
                await withMainSerialExecutor { await Task.yield() }
                await runUntilIdle()
            }
        } matching: { issue in
            String(describing: issue).contains("withMainSerialExecutor")
        }
        // withMainSerialExecutor put its own hook back at its end (it saw one installed); the
        // scope's end restored what it found.
        #expect(enqueueHook() == nil)
        #expect(await !detachedTaskRunsOnMainQueue())
    }
}

// MARK: - BridgesTesting: parallel scopes with main-actor work

@MainActor final class Counter {
    private(set) var value = 0
    /// Starts work that leaves the main actor and comes back, as a view model's `Task {}` does.
    func load(_ n: Int) {
        Task { value = await doubled(n) }
    }
}

/// Nonisolated and async: a main-actor caller leaves the main actor for it and comes back.
nonisolated func doubled(_ n: Int) async -> Int {
    2 * n
}

func parallelScopesWithMainActorWork(_ round: Int) async {
    await withTaskGroup(of: Void.self) { group in
        for scope in 0..<4 {
            group.addTask {
                let n = round * 10 + scope
                weak var released: Counter?
                await withSerialTasks {
                    let counter = await MainActor.run { Counter() }
                    released = counter
                    await counter.load(n)
                    let offMain = LockIsolated(0)
                    Task.detached {
                        let value = await doubled(n)
                        offMain.setValue(value)
                    }
                    await runUntilIdle()
                    #expect(await counter.value == 2 * n)
                    #expect(offMain.value == 2 * n)
                }
                #expect(released == nil)
            }
        }
    }
}

// MARK: - swift-concurrency-extras: withMainSerialExecutor, as its own tests use it

@MainActor func mainSerialExecutorScenarios() async {
    let xs = LockIsolated<[Int]>([])
    await withMainSerialExecutor {
        await withTaskGroup(of: Void.self) { group in
            for x in 1...100 {
                group.addTask { xs.withValue { $0.append(x) } }
            }
        }
    }
    #expect(xs.value == Array(1...100))

    let ys = LockIsolated<[Int]>([])
    await withMainSerialExecutor {
        await withTaskGroup(of: Void.self) { group in
            for y in 1...100 {
                group.addTask {
                    if y.isMultiple(of: 2) { await Task.yield() }
                    ys.withValue { $0.append(y) }
                }
            }
        }
    }
    #expect(ys.value == Array(0...49).map { $0 * 2 + 1 } + Array(1...50).map { $0 * 2 })

    await withMainSerialExecutor {
        #expect(await detachedTaskRunsOnMainQueue())
    }
}

// MARK: - swift-clocks: TestClock, module-qualified beside BridgesTesting's

/// In a Bridges scope, `runUntilIdle()` makes Point-Free's clock deterministic: the sleeper has
/// registered before the test advances.
func pointFreeTestClockInAScope() async {
    let clock = Clocks.TestClock()
    let fired = LockIsolated(false)
    await withSerialTasks {
        let sleeper = Task {
            try await clock.sleep(for: .seconds(1))
            fired.setValue(true)
        }
        await runUntilIdle()
        await clock.advance(by: .milliseconds(999))
        #expect(!fired.value)
        await clock.advance(by: .milliseconds(1))
        _ = await sleeper.result
        #expect(fired.value)
    }
}

/// As swift-clocks' README uses it: on the main serial executor.
@MainActor func pointFreeTestClockOnTheMainSerialExecutor() async {
    let clock = Clocks.TestClock()
    let ticks = LockIsolated(0)
    await withMainSerialExecutor {
        let timer = Task {
            while !Task.isCancelled {
                try await clock.sleep(for: .seconds(1))
                ticks.withValue { $0 += 1 }
            }
        }
        await clock.advance(by: .seconds(3))
        #expect(ticks.value == 3)
        timer.cancel()
        _ = await timer.result
    }
}

/// Every Bridges API that takes a clock is generic over `Clock`: Bridges' `debounce` on
/// Point-Free's `TestClock`, and a bridge's timeout on it.
func bridgesDebounceOnPointFreeTestClock() async throws {
    let clock = Clocks.TestClock()
    let (input, continuation) = AsyncStream.makeStream(of: Int.self)
    let debounced = input.debounce(for: .milliseconds(300), clock: clock, buffering: .unbounded)
    let received = LockIsolated<[Int]>([])
    await withSerialTasks {
        let consumer = Task {
            for await value in debounced { received.withValue { $0.append(value) } }
        }
        continuation.yield(1)
        await runUntilIdle()
        await clock.advance(by: .milliseconds(299))
        await runUntilIdle()
        #expect(received.value == [])
        await clock.advance(by: .milliseconds(1))
        await runUntilIdle()
        #expect(received.value == [1])
        continuation.finish()
        await consumer.value
    }
    try await bothClocksByModule()
}

/// With both BridgesTesting and swift-clocks imported, each clock is named with its module; every
/// Bridges API that takes a clock takes either.
func bothClocksByModule() async throws {
    let api = FakeCompletionAPI<Int, String>()
    // snippet:begin qualifiedClocks.after
    let bridgesClock = BridgesTesting.TestClock()       // settles withSerialTasks scopes as it advances
    let pointFreeClock = Clocks.TestClock()             // swift-clocks' TestClock<Duration>
    let immediate = BridgesTesting.ImmediateClock()     // beside Clocks.ImmediateClock()
    let call = Task {
        try await withCallback(timeout: .after(.seconds(5), on: pointFreeClock)) { done in api.call(42, completion: done) }
    }
    // snippet:end qualifiedClocks.after
    try await api.nextInvocation().complete(with: "Ada")
    #expect(try await call.value == "Ada")
    _ = (bridgesClock, immediate)
}
