import Bridges
import ExampleSupport
import Foundation

/// What a run of the example observed: checked by `main` and by ExamplesTests.
public struct FeedReaderReport: Sendable {
    public var channelTitle: String
    /// Every item of a 200-item feed, assembled from the event stream.
    public var items: [FeedItem]
    /// The legacy delegate's items for the same document (must be equal).
    public var legacyItems: [FeedItem]
    public var totalEvents: Int
    /// A reader that stops after 3 items: how many events the parser produced before aborting.
    public var firstThree: [FeedItem]
    public var eventsBeforeAbort: Int
    public var abortedEarly: Bool
    /// A malformed document: the items before the error, then the error.
    public var itemsBeforeError: [FeedItem]
    public var parseError: FeedParseError?
}

func rssDocument(items: Int, truncated: Bool = false) -> Data {
    var xml = #"<?xml version="1.0"?><rss version="2.0"><channel><title>Movie News</title>"# + "\n"
    for i in 1...items {
        xml += "  <item>\n    <title>Premiere \(i)</title>\n    <link>https://example.org/news/\(i)</link>\n  </item>\n"
    }
    xml += truncated ? "  <item>\n    <title>Premi" : "</channel></rss>\n"   // a download cut short
    return Data(xml.utf8)
}

/// Collects the channel title and items from the event stream into `title` and `items` (so
/// what arrived before an error is kept), stopping after `limit` items.
func readItems(_ events: CallbackStream<FeedEvent, any Error>, title: inout String, items: inout [FeedItem], limit: Int = .max) async throws {
    var path: [String] = [], fields: [String: String] = [:]
    for try await event in events {
        switch event {
        case .startElement(let name, _):
            path.append(name)
            if name == "item" { fields = [:] }
        case .text(let text):
            if path.suffix(2) == ["channel", "title"] { title += text } else if path.count >= 2 { fields[path.last!, default: ""] += text }
        case .endElement(let name):
            path.removeLast()
            if name == "item" {
                items.append(FeedItem(title: fields["title"] ?? "", link: fields["link"] ?? ""))
                if items.count == limit { return }
            }
        }
    }
}

public func runFeedReader(log: @Sendable (String) -> Void = { print($0) }) async throws -> FeedReaderReport {
    let feed = rssDocument(items: 200)

    // 1. The whole feed, streamed.
    let total = ExampleBox(0)
    var title = "", items: [FeedItem] = []
    try await readItems(feedEvents(feed, onParseEnded: { count, _ in total.value = count }), title: &title, items: &items)
    var legacyItems: [FeedItem] = []
    LegacyFeedParser().parse(feed) { legacyItems = $0 }
    log("\(title): \(items.count) items streamed (\(total.value) events); legacy delegate: \(legacyItems.count) items")

    // 2. Stop after three items: the parser is aborted, not run to the end.
    let ended = ExampleSignal()
    let stats = ExampleBox((events: 0, completed: true))
    var ignoredTitle = "", firstThree: [FeedItem] = []
    try await readItems(
        feedEvents(feed, buffering: .suspending(16), onParseEnded: { stats.value = ($0, $1); ended.open() }),
        title: &ignoredTitle, items: &firstThree, limit: 3
    )
    await ended.wait()
    log("stopped after \(firstThree.count) items: parser produced \(stats.value.events) of \(total.value) events, completed: \(stats.value.completed)")

    // 3. A malformed document: the items before the error arrive, then the error.
    var before: [FeedItem] = []
    var parseError: FeedParseError?
    do {
        var ignoredTitle = ""
        try await readItems(feedEvents(rssDocument(items: 2, truncated: true)), title: &ignoredTitle, items: &before)
    } catch let error as FeedParseError {
        parseError = error
    }
    log("malformed feed: \(before.count) items, then \(parseError.map { "error \($0.code) at line \($0.line)" } ?? "no error")")

    return FeedReaderReport(
        channelTitle: title, items: items, legacyItems: legacyItems, totalEvents: total.value,
        firstThree: firstThree, eventsBeforeAbort: stats.value.events, abortedEarly: !stats.value.completed,
        itemsBeforeError: before, parseError: parseError
    )
}
