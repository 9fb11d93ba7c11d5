import Foundation

// `swift run FeedReader`: an XMLParser document streamed as events through a delegate bridge.
let report = try await runFeedReader()
let expected = (1...200).map { FeedItem(title: "Premiere \($0)", link: "https://example.org/news/\($0)") }
let ok = report.channelTitle == "Movie News"
    && report.items == expected && report.legacyItems == expected
    && report.firstThree == Array(expected.prefix(3))
    && report.abortedEarly && report.eventsBeforeAbort < report.totalEvents / 4
    && report.itemsBeforeError == Array(expected.prefix(2))
    && report.parseError != nil
print(ok ? "FeedReader: OK" : "FeedReader: FAILED (\(report.items.count) items, first three \(report.firstThree), \(report.eventsBeforeAbort) events before abort, \(report.itemsBeforeError.count) items before \(String(describing: report.parseError)))")
exit(ok ? 0 : 1)
