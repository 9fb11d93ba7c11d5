import Bridges
import BridgesTesting

/// A search whose first call ignores cancellation: a cancelled sleep returns at once, and the
/// stale answer is returned anyway (what many legacy-wrapping searches do).
@available(BridgesClock, *)
private func search(_ query: String, clock: TestClock) async -> String {
    try? await clock.sleep(for: .seconds(1))
    return query.uppercased()
}

@available(BridgesTypedSequence, *)  // TestClock (13); debounce and mapLatest (AsyncSequence.Failure, 15)
var operatorsChapter: Chapter { Chapter(name: "operators", title: "Operators: debounce and cancel-previous (mapLatest)") {
    block(.legacy, "a hand-written cancel-previous loop: `current?.cancel(); current = Task { results.append(await search(q)) }`")
    let legacy = try await withSerialTasks { () async throws -> [String] in
        let clock = TestClock()
        let results = LockedBox<[String]>([])
        let (queries, typing) = AsyncStream.makeStream(of: String.self)
        let loop = Task {
            var current: Task<Void, Never>?
            for await query in queries {
                current?.cancel()
                current = Task { let found = await search(query, clock: clock); results.withValue { $0.append(found) } }
            }
            await current?.value
        }
        typing.yield("a"); await runUntilIdle()
        typing.yield("ab"); await runUntilIdle()
        await clock.advance(by: .seconds(1))
        typing.finish(); await loop.value
        return results.value
    }
    say("results shown: \(legacy)  (\"A\" is the cancelled search's stale answer)")

    block(.bridge, "the same searches through `debounce(for:clock:)` and `mapLatest`")
    let bridged = try await withSerialTasks { () async throws -> [String] in
        let clock = TestClock()
        let (queries, typing) = AsyncStream.makeStream(of: String.self)
        let results = queries
            .debounce(for: .milliseconds(300), clock: clock)
            .mapLatest { query in await search(query, clock: clock) }
            .record()
        typing.yield("a"); await runUntilIdle()
        await clock.advance(by: .milliseconds(300))      // "a" settles and its search starts
        typing.yield("ab"); await runUntilIdle()
        await clock.advance(by: .milliseconds(299))
        try check(results.elements.isEmpty, "something was shown before \"ab\" settled")
        await clock.advance(by: .milliseconds(1))        // "ab" settles: the search for "a" is cancelled
        await clock.advance(by: .seconds(1))
        typing.finish()
        await results.waitForEnd()
        return results.elements
    }
    say("results shown: \(bridged)")
    sayFigure("cancel-previous by hand showed \(legacy); mapLatest showed \(bridged) (a cancelled search's answer is never shown)", chapter: "operators")
    try check(bridged == ["AB"], "mapLatest showed \(bridged), expected only [\"AB\"]")
} }
