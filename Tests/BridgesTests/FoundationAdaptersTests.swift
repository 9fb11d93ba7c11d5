import Bridges
import Dispatch
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

/// The XMLParserDelegate bridged with DelegateProxy: start tags as a stream.
final class XMLStartTags: DelegateProxy<String, any Error>, XMLParserDelegate, @unchecked Sendable {  // state: the sink and a Sendable signal
    let released: Signal
    init(_ sink: CallbackStream<String, any Error>.Sink, released: Signal) {
        self.released = released
        super.init(sink)
    }
    deinit { released.open() }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
        qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
    ) {
        if case .terminated = sink.yield(elementName) { parser.abortParsing() }
    }
    func parserDidEndDocument(_ parser: XMLParser) { sink.finish() }
    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) { sink.finish(throwing: parseError) }
}

func startTags(of xml: String, buffering: BufferingPolicy = .unbounded, released: Signal, teardowns: Counter) -> CallbackStream<String, any Error> {
    CallbackStream(buffering: buffering) { sink in
        let parser = XMLParser(data: Data(xml.utf8))
        let proxy = XMLStartTags(sink, released: released)
        parser.delegate = proxy  // weak: only the stream keeps the proxy alive
        _ = parser.parse()       // synchronous: the whole document is produced in the builder
        return proxy.retained { teardowns.increment() }
    }
}

@Suite("Foundation adapters")
struct FoundationAdaptersTests {
    @Test func xmlParserDelegate_startTagsInOrder_proxyReleasedAfterTeardown() async throws {
        let released = Signal()
        let teardowns = Counter()
        let xml = "<items>" + (1...50).map { "<item\($0)/>" }.joined() + "</items>"
        var tags: [String] = []
        for try await tag in startTags(of: xml, released: released, teardowns: teardowns) { tags.append(tag) }
        #expect(tags == ["items"] + (1...50).map { "item\($0)" })
        await released.wait()
        #expect(teardowns.value == 1)
    }

    @Test func xmlParserDelegate_malformedDocument_throws() async {
        let released = Signal()
        let teardowns = Counter()
        var tags: [String] = []
        do {
            for try await tag in startTags(of: "<a><b></a>", released: released, teardowns: teardowns) { tags.append(tag) }
            Issue.record("a malformed document must throw")
        } catch {
            #expect(tags == ["a", "b"])
        }
        await released.wait()
        #expect(teardowns.value == 1)
    }

    @Test func xmlParserDelegate_latest_deliversOnlyTheLastTag() async throws {
        let released = Signal()
        let teardowns = Counter()
        let xml = "<items>" + (1...50).map { "<item\($0)/>" }.joined() + "</items>"
        var tags: [String] = []
        for try await tag in startTags(of: xml, buffering: .latest, released: released, teardowns: teardowns) { tags.append(tag) }
        #expect(tags == ["item50"])
        await released.wait()
    }

    @Test func notificationStream_deliversPostsInOrder_andRemovesObserverAtTeardown() async {
        let center = NotificationCenter()
        let name = Notification.Name("BridgesTests.ping")
        let observed = Counter()
        let stop = LegacyFlagForTests()
        // The observer is added by the consumer's first next(); until the consumer has what it
        // needs, a poster thread keeps posting (a fast producer, no sleeping).
        let poster = Task.detached {
            var n = 0
            while !stop.isSet {
                n += 1
                center.post(name: name, object: nil, userInfo: ["n": n])
            }
        }
        var received: [Int] = []
        for await n in center.notificationStream(named: name, transform: { note in
            observed.increment()
            return note.userInfo?["n"] as? Int
        }) {
            received.append(n)
            if received.count == 3 { break }
        }
        stop.set()
        await poster.value
        #expect(received.count == 3)
        #expect(received == Array(received[0]..<(received[0] + 3)), "consecutive posts, in order")
        let seen = observed.value
        for n in 0..<100 { center.post(name: name, object: nil, userInfo: ["n": n]) }
        #expect(observed.value == seen, "the observer was removed at teardown")
    }

    @Test func fileHandle_readLines_acrossChunks_andFinalLineWithoutNewline() async throws {
        let pipe = Pipe()
        let writer = pipe.fileHandleForWriting
        let consumer = Task {
            var lines: [String] = []
            for await line in pipe.fileHandleForReading.readLines() { lines.append(line) }
            return lines
        }
        writer.write(Data("alpha\nbe".utf8))
        writer.write(Data("ta\ngamma\n\ndelta".utf8))
        try writer.close()
        #expect(await consumer.value == ["alpha", "beta", "gamma", "", "delta"])
    }

    @Test func fileHandle_readChunks_allBytesArrive() async throws {
        let pipe = Pipe()
        let writer = pipe.fileHandleForWriting
        let consumer = Task {
            var bytes = Data()
            for await chunk in pipe.fileHandleForReading.readChunks(buffering: .suspending(4)) { bytes.append(chunk) }
            return bytes
        }
        let payload = Data((0..<200_000).map { UInt8($0 % 251) })
        DispatchQueue.global().async {
            writer.write(payload)
            try? writer.close()
        }
        #expect(await consumer.value == payload)
    }

    @Test func fileHandle_consumerBreaks_removesHandler() async throws {
        let pipe = Pipe()
        let reader = pipe.fileHandleForReading
        let writer = pipe.fileHandleForWriting
        writer.write(Data("one\ntwo\n".utf8))
        for await line in reader.readLines() where line == "one" { break }
        #expect(reader.readabilityHandler == nil)
        try writer.close()
    }
}

final class LegacyFlagForTests: Sendable {
    private let counter = Counter()
    var isSet: Bool { counter.value > 0 }
    func set() { counter.increment() }
}
