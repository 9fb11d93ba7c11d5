import Foundation

public let firstCatalog = [Movie(1, "Alien"), Movie(2, "Brazil"), Movie(3, "Casablanca")]
public let secondCatalog = [Movie(4, "Apollo 12"), Movie(1, "Alien")]

/// What the view showed after each step of the search-as-you-type scenario (this example's README).
public struct SearchTranscript: Sendable, Equatable {
    public var afterFirstCatalog: [[Movie]] = []
    public var afterTypingBeforeDebounce: [[Movie]] = []
    public var afterDebounce: [[Movie]] = []
    public var afterRetypingSameQuery: [[Movie]] = []
    public var afterSecondCatalog: [[Movie]] = []
    public var modelDeallocated = false
    public var catalogReleased = false

    /// What both implementations must show.
    public static let expected = SearchTranscript(
        afterFirstCatalog: [firstCatalog],
        afterTypingBeforeDebounce: [firstCatalog],
        afterDebounce: [firstCatalog, []],
        afterRetypingSameQuery: [firstCatalog, []],
        afterSecondCatalog: [firstCatalog, [], [secondCatalog[0]]],
        modelDeallocated: true,
        catalogReleased: true
    )
}

/// The scenario `main` runs against each implementation (the test runs the same steps with an
/// `#expect` after each).
public func runSearchScenario<H: SearchScreenHarness>(_ harness: H) async -> SearchTranscript {
    var transcript = SearchTranscript()
    await harness.run {
        await harness.publishCatalog(firstCatalog)
        transcript.afterFirstCatalog = harness.model?.rendered ?? []
        await harness.type("2")
        await harness.advance(milliseconds: 100)
        await harness.type("12")                      // "2" is never searched
        await harness.advance(milliseconds: 299)
        transcript.afterTypingBeforeDebounce = harness.model?.rendered ?? []
        await harness.advance(milliseconds: 1)
        transcript.afterDebounce = harness.model?.rendered ?? []
        await harness.type("12")
        await harness.advance(milliseconds: 400)
        transcript.afterRetypingSameQuery = harness.model?.rendered ?? []
        await harness.publishCatalog(secondCatalog)
        transcript.afterSecondCatalog = harness.model?.rendered ?? []
        (transcript.modelDeallocated, transcript.catalogReleased) = await harness.release()
    }
    return transcript
}

public struct SearchScreenReport: Sendable {
    public var combine: SearchTranscript?   // nil when built without Combine (Linux without the trait)
    public var async: SearchTranscript
}

@available(BridgesTypedSequence, *)  // AsyncSearchHarness
public func runSearchScreen(log: @Sendable (String) -> Void = { print($0) }) async -> SearchScreenReport {
    let asyncTranscript = await runSearchScenario(AsyncSearchHarness())
    log("async:   \(asyncTranscript.afterSecondCatalog), model released: \(asyncTranscript.modelDeallocated), catalog released: \(asyncTranscript.catalogReleased)")
    #if canImport(Combine) || OpenCombine
    let combineTranscript = await runSearchScenario(CombineSearchHarness())
    log("Combine: \(combineTranscript.afterSecondCatalog), model released: \(combineTranscript.modelDeallocated), catalog released: \(combineTranscript.catalogReleased)")
    #else
    let combineTranscript: SearchTranscript? = nil
    log("Combine: skipped (on Linux, build with --traits OpenCombine)")
    #endif
    return SearchScreenReport(combine: combineTranscript, async: asyncTranscript)
}
