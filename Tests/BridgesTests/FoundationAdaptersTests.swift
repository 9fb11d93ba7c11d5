import Bridges
import Dispatch
import Foundation
import TestSupport
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The XMLParserDelegate bridged with DelegateProxy: start tags as a stream.
// state: the sink, a Sendable signal, and `ended`, touched only by the parser's delegate calls on the thread running parse()
final class XMLStartTags: DelegateProxy<String, any Error>, XMLParserDelegate, @unchecked Sendable {
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
    /// XMLParser may report an error after `abortParsing()` and still end the document: finish once.
    private var ended = false
    func parserDidEndDocument(_ parser: XMLParser) {
        guard !ended else { return }
        ended = true
        sink.finish()
    }
    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        guard !ended else { return }
        ended = true
        sink.finish(throwing: parseError)
    }
}

func startTags(
    of xml: String, buffering: BufferingPolicy = .unbounded, released: Signal, teardowns: Counter
) -> CallbackStream<String, any Error> {
    CallbackStream(buffering: buffering) { sink in
        let parser = XMLParser(data: Data(xml.utf8))
        let proxy = XMLStartTags(sink, released: released)
        parser.delegate = proxy  // weak: only the stream keeps the proxy alive
        _ = parser.parse()  // synchronous: the whole document is produced in the builder
        return proxy.retained { teardowns.increment() }
    }
}

@Suite("Foundation adapters", .timeLimit(.minutes(3)))
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
            for try await tag in startTags(of: "<a><b></a>", released: released, teardowns: teardowns) {
                tags.append(tag)
            }
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
        for try await tag in startTags(of: xml, buffering: .latest, released: released, teardowns: teardowns) {
            tags.append(tag)
        }
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
        // A real thread, not a task: a spinning task could hold one of the few cooperative
        // threads the consumer needs.
        let posterDone = Signal()
        Thread.detachNewThread {
            var n = 0
            while !stop.isSet {
                n += 1
                center.post(name: name, object: nil, userInfo: ["n": n])
            }
            posterDone.open()
        }
        var received: [Int] = []
        for await n in center.notificationStream(
            named: name,
            transform: { note in
                observed.increment()
                return note.userInfo?["n"] as? Int
            })
        {
            received.append(n)
            if received.count == 3 { break }
        }
        stop.set()
        await posterDone.wait()
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

    @Test func fileHandle_regularFile_readLinesToTheEnd_twice() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bridges-\(UUID().uuidString).log")
        try Data("first\nsecond\nthird".utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var lines: [String] = []
        for await line in handle.readLines(buffering: .suspending(1)) { lines.append(line) }
        #expect(lines == ["first", "second", "third"])
        #expect(!_ReadingDescriptors.isReading(handle.fileDescriptor))
        try handle.seek(toOffset: 0)
        var again: [String] = []
        for await line in handle.readLines() { again.append(line) }
        #expect(again == ["first", "second", "third"], "a later loop on the same handle reads again")
    }

    @Test func fileHandle_descriptorNotOpen_isReportedAndTheStreamEnds() async {
        // A descriptor number far above anything this process opens (they are allocated lowest
        // first), so no parallel test can own it: poll answers POLLNVAL.
        let handle = FileHandle(fileDescriptor: 987, closeOnDealloc: false)
        let diagnostics = Collected<BridgeDiagnostic>()
        let chunks = await Diagnostics.withHandler({ diagnostics.append($0) }) {
            var count = 0
            for await _ in handle.readChunks(buffering: .suspending(1)) { count += 1 }
            return count
        }
        #expect(chunks == 0)
        #expect(diagnostics.values.map(\.kind) == [.fileHandleReadFailed])
        #expect(diagnostics.values.first?.message.contains("not open") == true)
        #expect(!_ReadingDescriptors.isReading(987), "the reader thread has gone")
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

    @Test func fileHandle_consumerBreaks_readerGoneBeforeTheLoopEnds_handleFreeForTheNextLoop() async throws {
        let pipe = Pipe()
        let reader = pipe.fileHandleForReading
        let writer = pipe.fileHandleForWriting
        let descriptor = reader.fileDescriptor
        let diagnostics = Collected<BridgeDiagnostic>()
        try await Diagnostics.withHandler({ diagnostics.append($0) }) {
            writer.write(Data("one\n".utf8))
            for await line in reader.readLines() where line == "one" { break }
            // The teardown waited for the reader thread: it has gone, and released the descriptor.
            #expect(!_ReadingDescriptors.isReading(descriptor))
            writer.write(Data("two\nthree\n".utf8))
            try writer.close()
            var rest: [String] = []
            for await line in reader.readLines() { rest.append(line) }
            #expect(rest == ["two", "three"], "the second loop reads what came after; nothing was stolen")
        }
        #expect(diagnostics.values.isEmpty)
        #expect(reader.readabilityHandler == nil, "no readabilityHandler is ever installed")
    }

    @Test func fileHandle_twoLoopsOnOnePipe_secondIsReportedAndEnds_firstGetsEveryLine() async throws {
        let pipe = Pipe()
        let reader = pipe.fileHandleForReading
        let writer = pipe.fileHandleForWriting
        let diagnostics = Collected<BridgeDiagnostic>()
        let firstStarted = Signal()
        let first = Task {
            var count = 0
            var iterator = reader.readLines().makeAsyncIterator()
            firstStarted.open()  // not yet: the reader starts on the first next()
            while let _ = await iterator.next() { count += 1 }
            return count
        }
        await firstStarted.wait()
        writer.write(Data("0\n".utf8))
        // Wait until the first loop's reader holds the descriptor (its first line arrives only then).
        while !_ReadingDescriptors.isReading(reader.fileDescriptor) { await Task.yield() }
        let secondCount = await Diagnostics.withHandler({ diagnostics.append($0) }) {
            var count = 0
            for await _ in reader.readLines() { count += 1 }
            return count
        }
        #expect(secondCount == 0, "the second loop ends at once")
        #expect(diagnostics.values.map(\.kind) == [.fileHandleAlreadyRead])
        #expect(diagnostics.values.first?.message.contains("already being read") == true)
        let lines = (1..<20_000).map { "\($0)\n" }.joined()
        DispatchQueue.global().async {
            writer.write(Data(lines.utf8))
            try? writer.close()
        }
        #expect(await first.value == 20_000, "the first loop was not disturbed")
    }

    @Test(arguments: [BufferingPolicy.suspending(2), .rendezvous, .watermark(low: 1, high: 3)])
    func fileHandle_waitingPolicy_readingPausesSoTheWriterIsHeldBack(policy: BufferingPolicy) async throws {
        let pipe = Pipe()
        let writer = pipe.fileHandleForWriting
        let chunk = 64 * 1024
        let total = 96 * chunk  // 6 MiB
        let consumed = Collected<Int>()
        let consumedWhenWriterFinished = Collected<Int>()
        let writerDone = Signal()
        let thread = Thread {
            let block = Data(repeating: 7, count: chunk)
            for _ in 0..<(total / chunk) { writer.write(block) }
            consumedWhenWriterFinished.append(consumed.values.reduce(0, +))
            try? writer.close()
            writerDone.open()
        }
        thread.start()
        var bytes = 0
        for await data in pipe.fileHandleForReading.readChunks(buffering: policy) {
            bytes += data.count
            consumed.append(data.count)
            for _ in 0..<20 { await Task.yield() }  // a slow consumer
        }
        await writerDone.wait()
        #expect(bytes == total, "nothing lost")
        // What the writer got rid of = consumed + in the stream's buffer + in the reader's hands
        // + in the pipe. Reading pauses when the buffer is full, so the writer can only finish
        // when the consumer is near the end.
        let getPipeSize: Int32 = 1032  // F_GETPIPE_SZ, which Glibc does not export
        let pipeSize = Int(fcntl(pipe.fileHandleForReading.fileDescriptor, getPipeSize))
        let bound = max(pipeSize, chunk) + 5 * chunk
        let atFinish = consumedWhenWriterFinished.values.first ?? 0
        #expect(
            atFinish >= total - bound, "the writer ran \(total - atFinish) bytes ahead of the consumer (bound \(bound))"
        )
    }

    @Test func fileHandle_cancelledWhilePaused_readerWakesAndExits_handleReleased() async throws {
        weak var released: FileHandle?
        let descriptor: Int32
        let writerEnd: FileHandle
        do {
            let pipe = Pipe()
            let reader = pipe.fileHandleForReading
            released = reader
            descriptor = reader.fileDescriptor
            writerEnd = pipe.fileHandleForWriting
            writerEnd.write(Data(repeating: 1, count: 8 * 1024))
            var iterator = reader.readChunks(buffering: .rendezvous).makeAsyncIterator()
            let first = await iterator.next()
            #expect(first?.isEmpty == false)
            // The reader now waits for demand (rendezvous: none until the next `next()`).
            #expect(_ReadingDescriptors.isReading(descriptor))
            let task = Task { [iterator] in
                var iterator = iterator
                return await iterator.next()  // waits for the rendezvous; ended by cancellation
            }
            task.cancel()
            _ = await task.value
        }
        // The iterator is gone with its task; its teardown waited for the reader thread.
        #expect(!_ReadingDescriptors.isReading(descriptor))
        #expect(released == nil, "the reader released the handle")
        try writerEnd.close()
    }
}

final class LegacyFlagForTests: Sendable {
    private let counter = Counter()
    var isSet: Bool { counter.value > 0 }
    func set() { counter.increment() }
}
