import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

public struct FeedItem: Sendable, Equatable {
    public var title: String
    public var link: String
}

// snippet:begin feedReader.before
/// The delegate most apps have: collects every item, then calls back once with all of them.
/// Nothing reaches the screen until the whole document is parsed, and a caller who no longer
/// wants the result cannot stop it.
public final class LegacyFeedParser: NSObject, XMLParserDelegate {
    private var items: [FeedItem] = []
    private var current: [String: String]?
    private var element = ""

    public func parse(_ document: Data, completion: ([FeedItem]) -> Void) {
        let parser = XMLParser(data: document)
        parser.delegate = self
        _ = parser.parse()
        completion(items)
    }

    public func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        element = name
        if name == "item" { current = [:] }
    }

    public func parser(_ parser: XMLParser, foundCharacters string: String) {
        current?[element, default: ""] += string.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "item", let fields = current {
            items.append(FeedItem(title: fields["title"] ?? "", link: fields["link"] ?? ""))
            current = nil
        }
    }
}
// snippet:end feedReader.before
