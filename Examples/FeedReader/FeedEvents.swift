import Bridges
import ExampleSupport
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One SAX-style event of an XML document.
public enum FeedEvent: Sendable, Equatable {
    case startElement(String, attributes: [String: String])
    /// Text between tags, whitespace-only runs skipped.
    case text(String)
    case endElement(String)
}

/// The document is not well-formed XML.
public struct FeedParseError: Error, Equatable {
    public var line: Int
    public var code: Int
}

// snippet:begin feedReader.after
/// Streams the parse events of an XML document: `for try await event in feedEvents(data)`.
///
/// `XMLParser.parse()` is synchronous and calls its delegate on the parsing thread, so each
/// iteration parses on a thread of its own, through a delegate proxy that holds the stream's
/// sink. Flow control: the proxy spends one credit per event and, out of credit, blocks the
/// parsing thread until the consumer takes an event (a ``BlockingDemandGate`` fed by `sink.onDemand`).
/// So under `.suspending(n)` the parser never runs more than `n` events ahead of the consumer,
/// and when the consumer leaves the loop the teardown wakes the proxy, which aborts the parse:
/// a large document is not parsed to the end for nobody.
///
/// - Parameter onParseEnded: Called on the parsing thread when `parse()` returns, with the
///   number of events the parser produced and whether it reached the end of the document.
public func feedEvents(
    _ document: Data,
    buffering: BufferingPolicy = .suspending(16),
    onParseEnded: @escaping @Sendable (_ events: Int, _ completed: Bool) -> Void = { _, _ in }
) -> CallbackStream<FeedEvent, any Error> {
    CallbackStream(buffering: buffering) { sink in
        let gate = BlockingDemandGate()
        sink.onDemand { gate.add($0) }
        let proxy = ParserEventProxy(sink, gate: gate)
        Thread {
            let parser = XMLParser(data: document)
            parser.delegate = proxy                 // weak: the stream keeps `proxy` alive (retained(until:))
            let completed = parser.parse() && proxy.error == nil
            if let error = proxy.error {
                sink.finish(throwing: error)
            } else if completed {
                sink.finish()
            }                                       // else: aborted because the consumer left
            onParseEnded(proxy.produced, completed)
        }.start()
        return proxy.retained { gate.stop() }       // the proxy sees it and aborts the parse
    }
}

/// The delegate: turns callbacks into events. `DelegateProxy` (Bridges) holds the sink and lets
/// the stream own the proxy until the teardown has run.
final class ParserEventProxy: DelegateProxy<FeedEvent, any Error>, XMLParserDelegate, @unchecked Sendable {
    // `produced` and `error` are touched only on the parsing thread (the delegate callbacks and
    // the code after `parse()` returns); the teardown only holds the proxy.
    private let gate: BlockingDemandGate
    private(set) var produced = 0
    /// Reported through the delegate: `parse()` on Linux can return `true` for a truncated document.
    private(set) var error: FeedParseError?

    init(_ sink: CallbackStream<FeedEvent, any Error>.Sink, gate: BlockingDemandGate) {
        self.gate = gate
        super.init(sink)
    }

    private func emit(_ event: FeedEvent, _ parser: XMLParser) {
        guard !gate.isStopped else { return parser.abortParsing() }
        produced += 1
        gate.spend()
        if case .terminated = sink.yield(event) { return parser.abortParsing() }
        if !gate.waitForCredit() { parser.abortParsing() }
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        emit(.startElement(name, attributes: attributes), parser)
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if !string.allSatisfy(\.isWhitespace) { emit(.text(string), parser) }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        if error == nil { error = FeedParseError(line: parser.lineNumber, code: (parseError as NSError).code) }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        emit(.endElement(name), parser)
    }
}
// snippet:end feedReader.after
