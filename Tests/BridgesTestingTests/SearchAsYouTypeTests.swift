import Bridges
import BridgesTesting
import TestSupport
import Testing

/// Search-as-you-type: a search field debounced by 300 ms, querying a legacy
/// completion-handler API. Driven by `TestClock`, `ProcessingChannel` and `FakeCompletionAPI`:
/// no real time passes, and each test takes milliseconds of wall time.
@Suite(.timeLimit(.minutes(3))) struct SearchAsYouTypeTests {
    /// The test as it was written before: it waits 330 ms of real time for a 300 ms debounce
    /// (slow, and flaky on a loaded machine). Kept, never run, as the "before" of MIGRATION.md.
    @available(BridgesTypedSequence, *)
    func realTimeTest_before_neverRun(api: FakeCompletionAPI<String, [String]>) async throws {
        // snippet:begin testClock.before
        let presenter = SearchPresenter(api: api, clock: ContinuousClock())
        let search = presenter.start()
        for text in ["1", "12", "123"] { try await presenter.searchText.send(text) }
        try await Task.sleep(for: .milliseconds(330))  // the debounce is 300 ms
        #expect(api.invocations.map(\.request) == ["123"])
        api.complete(with: ["123 Main St"])
        try await Task.sleep(for: .milliseconds(10))  // and hope the presenter has caught up
        #expect(presenter.results.values == [["123 Main St"]])
        presenter.searchText.finish()
        try await search.value
        // snippet:end testClock.before
    }

    @available(BridgesTypedSequence, *)
    @Test func typingWithinTheWindow_thenAdvancing300ms_sendsOneQuery() async throws {
        let api = FakeCompletionAPI<String, [String]>()
        try await withBridgesDiagnosticsAsFailures {
            // snippet:begin testClock.after
            let clock = TestClock()
            try await withSerialTasks {
                let presenter = SearchPresenter(api: api, clock: clock)
                let search = presenter.start()
                for text in ["1", "12", "123"] { try await presenter.searchText.send(text) }
                await clock.advance(by: .milliseconds(300))
                #expect(api.invocations.map(\.request) == ["123"])
                api.complete(with: ["123 Main St"])
                await runUntilIdle()
                #expect(presenter.results.values == [["123 Main St"]])
                presenter.searchText.finish()
                try await search.value
            }
            // snippet:end testClock.after
            #expect(api.invocationCount == 1)
            await clock.expectNoPendingSleepers()
        }
    }

    /// The same scenario, timed: 300 ms of virtual time pass in far less wall time (1–2 ms here).
    /// The figure is printed, not asserted: the project measures time only in its benchmark
    /// package, because CI's 2 shared cores (and this suite run in parallel under TSan) make any
    /// wall-clock bound flaky. That no real time is waited is structural: `TestClock.sleep`
    /// never calls a real clock.
    @available(BridgesTypedSequence, *)
    @Test func advancing300msOfVirtualTime_takesMillisecondsOfWallTime() async throws {
        let wallClock = ContinuousClock()
        var fastest = Duration.seconds(3600)
        for _ in 0..<3 {
            let api = FakeCompletionAPI<String, [String]>()
            let clock = TestClock()
            let elapsed = try await withSerialTasks {
                let started = wallClock.now
                let presenter = SearchPresenter(api: api, clock: clock)
                let search = presenter.start()
                for text in ["1", "12", "123"] { try await presenter.searchText.send(text) }
                await clock.advance(by: .milliseconds(300))
                api.complete(with: ["123 Main St"])
                await runUntilIdle()
                presenter.searchText.finish()
                try await search.value
                return started.duration(to: wallClock.now)
            }
            #expect(api.invocations.map(\.request) == ["123"])
            fastest = min(fastest, elapsed)
        }
        print("300 ms of virtual time took at best \(fastest) of wall time (3 runs)")
    }

    /// The example of docs/README-testing.md, as written there.
    @available(BridgesTypedSequence, *)
    @Test func typingWithinTheDebounceWindowSendsOneQuery() async throws {
        let api = FakeCompletionAPI<String, [String]>()  // the legacy search API, driven by the test
        let clock = TestClock()  // virtual time
        try await withBridgesDiagnosticsAsFailures {  // misuse of a bridge fails this test
            try await withSerialTasks {  // tasks run one job at a time, observably
                let presenter = SearchPresenter(api: api, clock: clock)
                let search = presenter.start()
                for text in ["1", "12", "123"] { try await presenter.searchText.send(text) }
                await clock.advance(by: .milliseconds(299))
                #expect(api.invocationCount == 0)  // nothing fires early
                await clock.advance(by: .milliseconds(1))
                let query = try await api.nextInvocation()
                #expect(query.request == "123")  // one query, for the last text
                query.complete(with: ["123 Main St"])
                await runUntilIdle()
                #expect(presenter.results.values == [["123 Main St"]])
                search.cancel()
                _ = await search.result
                await clock.expectNoPendingSleepers()  // no timer left behind
            }
        }
    }

    @available(BridgesTypedSequence, *)
    @Test func advancing299ms_sendsNoQuery() async throws {
        let clock = TestClock()
        let api = FakeCompletionAPI<String, [String]>()
        try await withSerialTasks {
            let presenter = SearchPresenter(api: api, clock: clock)
            let search = presenter.start()
            for text in ["1", "12", "123"] { try await presenter.searchText.send(text) }
            await clock.advance(by: .milliseconds(299))
            #expect(api.invocationCount == 0)
            // one timer: later text moved its deadline
            #expect(clock.pendingSleepers == [TestClock.Instant(offset: .milliseconds(300))])

            search.cancel()
            _ = await search.result
            await clock.expectNoPendingSleepers()
            #expect(api.invocationCount == 0)
        }
    }

    @available(BridgesTypedSequence, *)
    @Test func typingAfterTheWindow_sendsEachSettledQuery() async throws {
        let clock = TestClock()
        try await withSerialTasks {
            let text = ProcessingChannel<String>()
            let queries = text.debounce(for: .milliseconds(300), clock: clock, buffering: .unbounded).record()
            try await text.send("1")
            await clock.advance(by: .milliseconds(300))
            #expect(try await queries.next() == "1")
            try await text.send("12")
            await clock.advance(by: .milliseconds(100))
            try await text.send("123")
            await clock.advance(by: .milliseconds(299))
            await queries.expectNoMoreElements()
            await clock.advance(by: .milliseconds(1))
            #expect(try await queries.next() == "123")
            text.finish()
            await queries.expectFinished()
            #expect(queries.elements == ["1", "123"])
        }
    }
}
