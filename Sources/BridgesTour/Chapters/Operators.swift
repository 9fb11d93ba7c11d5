import Bridges
import ExampleTesting

/// A search whose first call ignores cancellation: a cancelled sleep returns at once, and the
/// stale answer is returned anyway (what many legacy-wrapping searches do).
@available(BridgesClock, *)
private func search(_ query: String, clock: TestClock) async -> String {
    try? await clock.sleep(for: .seconds(1))
    return query.uppercased()
}

@available(BridgesTypedSequence, *)  // TestClock (13); debounce and mapLatest (AsyncSequence.Failure, 15)
var operatorsChapter: Chapter {
    Chapter(name: "operators", title: "Operators: debounce, cancel-previous (mapLatest), one upstream shared") {
        block(
            .legacy,
            "a hand-written cancel-previous loop: `current?.cancel(); current = Task { results.append(await search(q)) }`"
        )
        let legacy = try await withSerialTasks { () async throws -> [String] in
            let clock = TestClock()
            let results = LockedBox<[String]>([])
            let (queries, typing) = AsyncStream.makeStream(of: String.self)
            let loop = Task {
                var current: Task<Void, Never>?
                for await query in queries {
                    current?.cancel()
                    current = Task {
                        let found = await search(query, clock: clock)
                        results.withValue { $0.append(found) }
                    }
                }
                await current?.value
            }
            typing.yield("a")
            await runUntilIdle()
            typing.yield("ab")
            await runUntilIdle()
            await clock.advance(by: .seconds(1))
            typing.finish()
            await loop.value
            return results.value
        }
        say("results shown: \(legacy)  (\"A\" is the cancelled search's stale answer)")

        block(.bridge, "the same searches through `debounce(for:clock:buffering:)` and `mapLatest`")
        let bridged = try await withSerialTasks { () async throws -> [String] in
            let clock = TestClock()
            let (queries, typing) = AsyncStream.makeStream(of: String.self)
            let results =
                queries
                .debounce(for: .milliseconds(300), clock: clock, buffering: .unbounded)
                .mapLatest { query in await search(query, clock: clock) }
                .record()
            typing.yield("a")
            await runUntilIdle()
            await clock.advance(by: .milliseconds(300))  // "a" settles and its search starts
            typing.yield("ab")
            await runUntilIdle()
            await clock.advance(by: .milliseconds(299))
            try check(results.elements.isEmpty, "something was shown before \"ab\" settled")
            await clock.advance(by: .milliseconds(1))  // "ab" settles: the search for "a" is cancelled
            await clock.advance(by: .seconds(1))
            typing.finish()
            await results.waitForEnd()
            return results.elements
        }
        say("results shown: \(bridged)")
        sayFigure(
            "cancel-previous by hand showed \(legacy); mapLatest showed \(bridged) (a cancelled search's answer is never shown)",
            chapter: "operators")
        try check(bridged == ["AB"], "mapLatest showed \(bridged), expected only [\"AB\"]")

        block(.legacy, "one upstream for several screens: a hand-written pump into a Broadcast")
        let pumped = await withSerialTasks { () async -> Int in
            let clock = TestClock()
            let ticks = ClockTicks(clock: clock)
            // snippet:begin share.before
            let events = Broadcast<Int>(replay: 1)
            let pump = Task {
                for await tick in ticks { events.yield(tick) }
                events.finish()
            }
            // snippet:end share.before
            let screen = Task { await events.stream().prefix(3).reduce(into: [Int]()) { $0.append($1) } }
            await runUntilIdle()
            await clock.advance(by: .seconds(13))  // the screen takes three ticks and leaves; ten more seconds pass
            _ = await screen.value
            pump.cancel()
            return ticks.pulled.value
        }
        say("the pump pulled \(pumped) ticks for a screen that showed 3: nothing stops it when nobody listens")

        block(.bridge, "`ticks.shared(replay: 1)`: started by the first consumer, stopped when the last one leaves")
        let shared = await withSerialTasks { () async -> Int in
            let clock = TestClock()
            let ticks = ClockTicks(clock: clock)
            // snippet:begin share.after
            let events = ticks.shared(replay: 1)
            // snippet:end share.after
            let screen = Task { await events.stream().prefix(3).reduce(into: [Int]()) { $0.append($1) } }
            await runUntilIdle()
            await clock.advance(by: .seconds(13))
            _ = await screen.value
            return ticks.pulled.value
        }
        say("shared() pulled \(shared) ticks: the upstream stopped when the screen left")
        sayFigure(
            "a hand-written pump pulled \(pumped) ticks for 3 shown; shared() pulled \(shared)", chapter: "operators")
        try check(shared == 3 && pumped > shared, "shared() pulled \(shared), the pump \(pumped)")
    }
}

/// One tick per second of `clock`, without end, counting the ticks pulled.
@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
private struct ClockTicks: AsyncSequence, Sendable {
    let clock: TestClock
    let pulled = LockedBox(0)

    struct AsyncIterator: AsyncIteratorProtocol {
        let ticks: ClockTicks
        mutating func next() async -> Int? {
            do { try await ticks.clock.sleep(for: .seconds(1)) } catch { return nil }
            return ticks.pulled.withValue { count in
                count += 1
                return count
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(ticks: self) }
}
