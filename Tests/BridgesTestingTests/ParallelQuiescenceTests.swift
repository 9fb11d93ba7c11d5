import Bridges
import BridgesTesting
import Dispatch
import TestSupport
import Testing

/// Quiescence scoped to one test: these suites run in parallel (Swift Testing's default), each
/// test with its own `withSerialTasks` scope, its own TestClock and its own presenter.
@Suite(.timeLimit(.minutes(3))) struct ParallelQuiescenceTests {
    /// 50 of these run at once. Each is exact: nothing fires at 299 ms, exactly one query (its
    /// own, never another test's) at 300 ms, its result delivered after `runUntilIdle()`, and
    /// nothing left behind. With one process-wide serial queue they stalled each other; with a
    /// scope per test they run side by side.
    @available(BridgesTypedSequence, *)
    @Test(arguments: 0..<50)
    func debouncedSearch_inParallel_isExactPerTest(index: Int) async throws {
        let api = FakeCompletionAPI<String, [String]>()
        let clock = TestClock()
        let leaks = LeakTracker()
        try await withBridgesDiagnosticsAsFailures {
            try await withSerialTasks {
                let presenter = SearchPresenter(api: api, clock: clock)
                leaks.track(presenter)
                let search = presenter.start()
                let typed = (1...(index % 4 + 2)).map { "q\(index)-\($0)" }
                for text in typed { try await presenter.searchText.send(text) }
                await clock.advance(by: .milliseconds(299))
                #expect(api.invocationCount == 0)
                #expect(clock.pendingSleepers == [TestClock.Instant(offset: .milliseconds(300))])
                await clock.advance(by: .milliseconds(1))
                #expect(api.invocations.map(\.request) == [typed.last!])
                api.complete(with: ["result of \(index)"])
                await runUntilIdle()
                #expect(presenter.results.values == [["result of \(index)"]])
                // A second query after the window, at its own virtual time.
                try await presenter.searchText.send("again \(index)")
                await clock.advance(by: .milliseconds(300))
                #expect(api.invocations.map(\.request) == [typed.last!, "again \(index)"])
                api.complete(with: ["again"])
                await runUntilIdle()
                #expect(presenter.results.values == [["result of \(index)"], ["again"]])
                presenter.searchText.finish()
                try await search.value
                await clock.expectNoPendingSleepers()
                #expect(clock.now == TestClock.Instant(offset: .milliseconds(600)))
            }
        }
        await leaks.expectAllReleased()
    }

    /// One scope whose executor is blocked (a tracked job waits on a semaphore) does not delay
    /// another scope: each has its own executor. With one shared serial queue the second scope
    /// would wait behind the blocked job, and this test would hang until its bound.
    @Test func scopes_doNotWaitForEachOther() async {
        let release = DispatchSemaphore(value: 0)
        let (blocked, blocking) = AsyncStream<Void>.makeStream()
        let log = Collected<String>()
        async let first: Void = withSerialTasks {
            let task = Task {
                // From a queue: tracked code that resumes a task made before its scope (this
                // test's own, waiting below) is reported.
                DispatchQueue.global().async { blocking.yield() }
                blockThread(until: release)  // blocks this scope's executor until the other scope is done
                log.append("first")
            }
            await task.value
        }
        var iterator = blocked.makeAsyncIterator()
        await iterator.next()
        await withSerialTasks {
            Task { log.append("second") }
            await runUntilIdle()
            #expect(log.values == ["second"])
        }
        release.signal()
        await first
        #expect(log.values == ["second", "first"])
    }

    /// Tasks that tests outside any scope start are never serialised or waited for.
    @Test func tasksOutsideAnyScope_runUntouched() async {
        let log = Collected<Int>()
        let outside = Task.detached { log.append(1) }
        await withSerialTasks {
            await runUntilIdle()
        }
        await outside.value
        #expect(log.values == [1])
    }
}
