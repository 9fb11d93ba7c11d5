import Testing

@testable import SearchScreen

/// One test, written against `SearchScreenHarness`, run against the Combine view model (on a
/// virtual-time scheduler) and the async one (on `TestClock`).
func searchAsYouType<H: SearchScreenHarness>(_ harness: H) async {
    await harness.run {
        await harness.publishCatalog(firstCatalog)
        #expect(harness.model?.rendered == [firstCatalog])  // the empty query, at once

        await harness.type("2")
        await harness.advance(milliseconds: 100)
        await harness.type("12")
        await harness.advance(milliseconds: 299)
        #expect(harness.model?.rendered == [firstCatalog])  // nothing fires early

        await harness.advance(milliseconds: 1)
        #expect(harness.model?.rendered == [firstCatalog, []])  // "12" only; "2" never searched

        await harness.type("12")
        await harness.advance(milliseconds: 400)
        #expect(harness.model?.rendered == [firstCatalog, []])  // removeDuplicates

        await harness.publishCatalog(secondCatalog)
        #expect(harness.model?.rendered == [firstCatalog, [], [secondCatalog[0]]])  // combineLatest

        let (deallocated, catalogReleased) = await harness.release()
        #expect(deallocated)
        #expect(catalogReleased)
    }
}

@Suite("Example: SearchScreen", .timeLimit(.minutes(3)))
struct SearchScreenTests {
    @available(BridgesTypedSequence, *)
    @Test func asyncViewModel() async {
        await searchAsYouType(AsyncSearchHarness())
    }

    #if canImport(Combine) || OpenCombine
    @Test func combineViewModel() async {
        await searchAsYouType(CombineSearchHarness())
    }
    #endif

    /// Bridges' `debounce` and `collectLatest(weak:in:)` in the async model: releasing the model
    /// while a query waits out its debounce window cancels that timer and stops the pipeline.
    @available(BridgesTypedSequence, *)
    @Test func asyncViewModel_releasedMidDebounce_cancelsTheTimerAndStopsThePipeline() async {
        let harness = AsyncSearchHarness()
        await harness.run {
            await harness.publishCatalog(firstCatalog)
            await harness.type("12")
            await harness.advance(milliseconds: 150)
            #expect(harness.model?.rendered == [firstCatalog])
            let (deallocated, catalogReleased) = await harness.release()  // also expects no sleeper left
            #expect(deallocated)
            #expect(catalogReleased)
        }
    }

    @available(BridgesTypedSequence, *)
    @Test func exampleRunReportsTheSameTranscriptForBoth() async {
        let report = await runSearchScreen(log: { _ in })
        #expect(report.async == .expected)
        #if canImport(Combine) || OpenCombine
        #expect(report.combine == .expected)
        #endif
    }
}
