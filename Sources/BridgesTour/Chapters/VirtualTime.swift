import Bridges
import ExampleTesting  // BridgesTesting's helpers without XCTest and Testing, which an executable cannot link on macOS

/// Debounce over any AsyncSequence on any clock: the kind of time-based code a test must not
/// wait for in real time. (BridgesTesting ships no operators; this one is the chapter's own.)
@available(BridgesClock, *)
private func debounced<S: AsyncSequence & Sendable, C: Clock>(
    _ upstream: S, for interval: Duration, clock: C
) -> AsyncStream<S.Element> where S.Element: Sendable, C.Duration == Duration {
    AsyncStream { continuation in
        let task = Task {
            var timer: Task<Void, Never>?
            do {
                for try await value in upstream {
                    timer?.cancel()
                    timer = Task {
                        do { try await clock.sleep(for: interval) } catch { return }
                        if !Task.isCancelled { continuation.yield(value) }
                    }
                }
            } catch {}
            let last = timer
            await withTaskCancellationHandler {
                await last?.value
            } onCancel: {
                last?.cancel()
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
    }
}

@available(BridgesClock, *)  // the tour measures with Clock and Duration
var virtualTimeChapter: Chapter {
    Chapter(name: "testing", title: "Testing: virtual time, fakes, quiescence") {
        let wallClock = ContinuousClock()

        // The way such a test is usually first written: the real clock, and a sleep long enough "on this machine".
        block(.legacy, "the search-as-you-type presenter tested on the real clock, waiting with Task.sleep")
        do {
            let api = FakeCompletionAPI<String, [String]>()
            let (text, typing) = AsyncStream.makeStream(of: String.self)
            let search = Task {
                for await query in debounced(text, for: .milliseconds(300), clock: wallClock) {
                    _ = try await withCallback { done in api.call(query, completion: done) }
                }
            }
            let started = wallClock.now
            for typed in ["1", "12", "123"] { typing.yield(typed) }
            try await Task.sleep(for: .milliseconds(350))  // "300 ms and a margin": the legacy test's only way to wait
            let queries = api.invocations.map(\.request)
            let elapsed = started.duration(to: wallClock.now)
            sayFigure(
                "a test on the real clock slept \(elapsed.formatted) of wall time to see queries \(queries) (on a slow CI machine it may see none)",
                chapter: "testing")
            for invocation in api.invocations { invocation.complete(with: []) }
            typing.finish()
            search.cancel()
            _ = await search.result
        }

        block(.bridge, "the same presenter on a TestClock, with a fake legacy API and quiescence (BridgesTesting)")
        let api = FakeCompletionAPI<String, [String]>()  // a legacy search API the test drives
        let clock = TestClock()
        let text = ProcessingChannel<String>()
        let results = LockedBox<[[String]]>([])
        let started = wallClock.now

        try await withSerialTasks {
            let search = Task {
                for await query in debounced(text, for: .milliseconds(300), clock: clock) {
                    let found = try await withCallback { done in api.call(query, completion: done) }
                    results.value.append(found)  // one writer: this task
                }
            }
            for typed in ["1", "12", "123"] { try await text.send(typed) }
            say("typed \"1\", \"12\", \"123\" within the 300 ms debounce window (virtual time \(clock.now))")

            await clock.advance(by: .milliseconds(299))
            say("after 299 ms: \(api.invocationCount) query sent")
            try check(api.invocationCount == 0, "a query fired before the debounce interval")

            await clock.advance(by: .milliseconds(1))
            let requests = api.invocations.map(\.request)
            say("after 300 ms: queries \(requests)")
            try check(requests == ["123"], "expected one query for \"123\", got \(requests)")

            api.complete(with: ["123 Main St"])
            await runUntilIdle()  // the presenter has handled the answer: no sleep, no Task.yield loop
            say("results \(results.value)")
            try check(results.value == [["123 Main St"]], "the answer did not reach the presenter")

            text.finish()
            try await search.value
        }
        let elapsed = started.duration(to: wallClock.now)
        sayFigure(
            "300 ms of virtual time took \(elapsed.formatted) of wall time, with exact assertions at 299 and 300 ms; sleepers left: \(clock.pendingSleepers.count)",
            chapter: "testing")
        try check(clock.pendingSleepers.isEmpty, "a timer was left sleeping")

        // A buggy legacy API calling back twice: the bridge ignores the second call and reports it
        // with its call site (a test failure under withBridgesDiagnosticsAsFailures).
        let reports = LockedBox<[BridgeDiagnostic]>([])
        let twice = FakeCompletionAPI<Void, Int>()
        let value = try await Diagnostics.withHandler({ d in reports.value.append(d) }) {
            async let value = withCallback { done in twice.call(completion: done) }
            try await twice.nextInvocation().callTwice(with: 42)
            return try await value
        }
        say(
            "callback called twice → value \(value), diagnostics: \(reports.value.map { "\($0.kind) at \($0.fileID):\($0.line)" })"
        )
        try check(value == 42 && reports.value.map(\.kind) == [.callbackCalledTwice], "double callback not handled")
    }
}
