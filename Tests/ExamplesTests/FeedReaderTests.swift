import Testing

@testable import FeedReader

@Suite("Example: FeedReader", .timeLimit(.minutes(3)))
struct FeedReaderTests {
    @Test func itemsStreamWhileParsing_breakAbortsTheParser_malformedDocumentThrowsAfterItsItems() async throws {
        let report = try await runFeedReader(log: { _ in })
        let expected = (1...200).map { FeedItem(title: "Premiere \($0)", link: "https://example.org/news/\($0)") }
        #expect(report.channelTitle == "Movie News")
        #expect(report.items == expected)
        #expect(report.legacyItems == expected)
        #expect(report.firstThree == Array(expected.prefix(3)))
        #expect(report.abortedEarly)
        // 3 items ≈ 30 events consumed; the parser may be at most 16 (the buffer) + 1 ahead.
        #expect(report.eventsBeforeAbort <= 30 + 17)
        #expect(report.itemsBeforeError == Array(expected.prefix(2)))
        #expect(report.parseError != nil)
    }
}
