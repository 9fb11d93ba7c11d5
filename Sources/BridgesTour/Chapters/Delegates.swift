// swift-format-ignore-file
// (its snippet regions are MIGRATION.md's before/after blocks, line for line)
import Bridges
import Dispatch
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

// MARK: - A delegate, bridged

/// The legacy way: a delegate object that accumulates, and a completion handler at the end.
final class LegacyTagCollector: NSObject, XMLParserDelegate {
    var tags: [String] = []
    var completion: ([String]) -> Void = { _ in }
    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
        tags.append(elementName)
    }
    func parserDidEndDocument(_ parser: XMLParser) { completion(tags) }
}

/// The bridged way: the delegate forwards each event to the stream's sink.
final class StartTagEvents: DelegateProxy<String, any Error>, XMLParserDelegate, @unchecked Sendable {  // state: the sink only
    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
        if case .terminated = sink.yield(elementName) { parser.abortParsing() }
    }
    func parserDidEndDocument(_ parser: XMLParser) { sink.finish() }
    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) { sink.finish(throwing: parseError) }
}

/// Records what a producer was told, for the chapter's table.
final class YieldLog: @unchecked Sendable {  // every access holds `lock`
    private let lock = DispatchSemaphore(value: 1)
    private var results: [String: Int] = [:]
    private var _dropped = 0
    func record(_ result: CallbackStream<String, any Error>.YieldResult) {
        let key: String = switch result {
        case .enqueued: "enqueued"
        case .dropped: "dropped"
        case .stopProducing: "stopProducing"
        case .terminated: "terminated"
        }
        lock.wait(); results[key, default: 0] += 1; lock.signal()
    }
    func dropped() { lock.wait(); _dropped += 1; lock.signal() }
    var summary: String { lock.wait(); defer { lock.signal() }; return results.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") }
    var droppedCount: Int { lock.wait(); defer { lock.signal() }; return _dropped }
}

/// A delegate proxy that also logs what each yield answered.
final class LoggingStartTagEvents: DelegateProxy<String, any Error>, XMLParserDelegate, @unchecked Sendable {  // `log` is thread-safe
    let log: YieldLog
    init(_ sink: CallbackStream<String, any Error>.Sink, log: YieldLog) {
        self.log = log
        super.init(sink)
    }
    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
        let result = sink.yield(elementName)
        log.record(result)
        if case .terminated = result { parser.abortParsing() }
    }
    func parserDidEndDocument(_ parser: XMLParser) { sink.finish() }
    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) { sink.finish(throwing: parseError) }
}

// MARK: - A multi-shot callback API

/// A legacy download with progress and completion callbacks, called on its own queue.
final class LegacyDownloader: Sendable {
    private let queue = DispatchQueue(label: "legacy-downloader")
    final class Job: Sendable {
        private let flag = LegacyFlag()
        var isCancelled: Bool { flag.isSet }
        func cancel() { flag.set() }
    }
    @discardableResult
    func download(steps: Int, progress: @escaping @Sendable (Double) -> Void, completion: @escaping @Sendable (Result<Int, any Error>) -> Void) -> Job {
        let job = Job()
        queue.async {
            for step in 1...steps {
                if job.isCancelled { return completion(.failure(CancellationError())) }
                progress(Double(step) / Double(steps))
            }
            completion(.success(steps * 1_024))
        }
        return job
    }
}

@available(BridgesClock, *)  // the tour measures with Clock and Duration
var delegatesChapter: Chapter { Chapter(name: "delegates", title: "Delegates and multi-shot callbacks → AsyncSequence") {
    let document = "<feed>" + (1...100).map { "<item\($0)/>" }.joined() + "</feed>"
    let xml = Data(document.utf8)
    let downloader = LegacyDownloader()
    let center = NotificationCenter()
    let didSave = Notification.Name("didSave")

    block(.legacy, "a delegate object, progress and completion closures, an observer token")
    // Legacy: a delegate held weakly by the parser, results through a completion handler.
    do {
        let parser = XMLParser(data: xml)
        // snippet:begin delegate.before
        let collector = LegacyTagCollector()   // the parser holds its delegate weakly: keep it alive
        collector.completion = { tags in print("parsed \(tags.count) tags") }
        parser.delegate = collector
        _ = parser.parse()
        // snippet:end delegate.before
        try check(collector.tags.count == 101, "the legacy delegate saw every tag")
    }

    // Multi-shot callback → AsyncSequence, cancellation reaching the legacy job.
    do {
        let finished = TourSignal()
        // snippet:begin multiShot.before
        downloader.download(steps: 4, progress: { fraction in
            print("progress \(fraction)")
        }, completion: { result in
            print("done: \(result)")
            finished.open()
        })
        // snippet:end multiShot.before
        await finished.wait()
    }
    // NotificationCenter observer → for await.
    do {
        // snippet:begin notifications.before
        let token = center.addObserver(forName: didSave, object: nil, queue: nil) { note in
            print("saved \(note.userInfo?["id"] ?? "?")")
        }
        // …and somewhere later, never forgotten:
        center.removeObserver(token)
        // snippet:end notifications.before
    }
    // The token-based observer's classic bug: the token is dropped instead of removed.
    do {
        let screenCenter = NotificationCenter()
        let calls = LockedBox(0)
        _ = screenCenter.addObserver(forName: didSave, object: nil, queue: nil) { _ in calls.withValue { $0 += 1 } }
        // …the screen that added it closes here, without `removeObserver`.
        for id in 1...3 { screenCenter.post(name: didSave, object: nil, userInfo: ["id": id]) }
        say("an observer whose screen closed without removeObserver: still called \(calls.value) of 3 times")
        try check(calls.value == 3, "a dropped observer token does not remove the observer")
    }

    // A pipe: readabilityHandler hands over whatever arrives; nothing can hold the writer back.
    let pipeTotal = 8 * 1024 * 1024
    do {
        let run = try await pipeWithASlowReader(total: pipeTotal, legacyChunks)
        let ahead = pipeTotal - run.takenWhenWriterFinished
        say("a pipe, 8 MiB from a fast writer to a slow reader through readabilityHandler + AsyncStream:")
        say("  the writer finished with the reader \(ahead / 1024) KiB behind: buffered in memory, nothing held it back")
        try check(run.received == pipeTotal, "the legacy reader received everything, got \(run.received)")
    }

    block(.bridge, "CallbackStream, DelegateProxy, notificationStream, Broadcast, FileHandle.readChunks")
    // Bridged: the stream owns the proxy until teardown; the loop owns the results.
    // snippet:begin delegate.after
    let tags = CallbackStream<String, any Error> { sink in
        let parser = XMLParser(data: xml)
        let proxy = StartTagEvents(sink)       // retained by the stream until teardown
        parser.delegate = proxy
        _ = parser.parse()                     // aborts itself if the consumer leaves early
        return proxy.retained()
    }
    var count = 0
    for try await _ in tags { count += 1 }
    print("parsed \(count) tags")
    // snippet:end delegate.after
    try check(count == 101, "the bridged delegate delivered every tag, got \(count)")

    // The same fast producer under each of the four policies. XMLParser.parse() is synchronous and
    // runs inside the builder, so the whole document is produced before the consumer takes the
    // first element: the fastest producer meets the slowest consumer.
    say("one fast producer (101 start tags), four policies:")
    for policy in [BufferingPolicy.unbounded, .latest, .drop, .rendezvous] {
        let log = YieldLog()
        let stream = CallbackStream<String, any Error>(buffering: policy, onDrop: { _ in log.dropped() }) { sink in
            let parser = XMLParser(data: xml)
            let proxy = LoggingStartTagEvents(sink, log: log)
            parser.delegate = proxy
            _ = parser.parse()
            return proxy.retained()
        }
        var delivered: [String] = []
        for try await tag in stream { delivered.append(tag) }
        let shown = delivered.count <= 2 ? delivered.description : "[\(delivered.first!), …, \(delivered.last!)]"
        say("  \(policy.description.padding(toLength: 12, withPad: " ", startingAt: 0)) delivered \(delivered.count) \(shown); producer told: \(log.summary); onDrop saw \(log.droppedCount)")
        switch policy {
        case .unbounded, .rendezvous:
            try check(delivered.count == 101 && log.droppedCount == 0, "\(policy) must deliver everything")
        case .latest:
            try check(delivered == ["item100"] && log.droppedCount == 100, ".latest keeps only the newest")
        default:
            try check(delivered.isEmpty && log.droppedCount == 101, ".drop delivers only to a waiting consumer")
        }
    }
    say("→ .rendezvous lost nothing: each synchronous yield was enqueued and told the producer to stop;")
    say("  a pausable source (FileHandle, URLSessionTask) resumes when sink.onDemand says the consumer drained.")

    // snippet:begin multiShot.after
    let progress = CallbackStream<Double, any Error>(buffering: .latest) { sink in
        let job = downloader.download(steps: 4, progress: { sink.yield($0) }, completion: { result in
            switch result {
            case .success: sink.finish()
            case .failure(let error): sink.finish(throwing: error)
            }
        })
        return Cancellation { job.cancel() }
    }
    for try await fraction in progress {
        print("progress \(fraction)")
    }
    // snippet:end multiShot.after
    say("(.latest: a loop slower than the legacy queue sees the newest progress, never a backlog; always the last)")

    let saves = Task {
        var ids: [Int] = []
        // snippet:begin notifications.after
        for await id in center.notificationStream(named: didSave, transform: { $0.userInfo?["id"] as? Int }) {
            print("saved \(id)")
            ids.append(id)
            if ids.count == 3 { break }  // the observer is removed here (teardown)
        }
        // snippet:end notifications.after
        return ids
    }
    // The observer is added when the loop starts; a poster thread posts until the loop has
    // seen three (a fast producer: no sleeping, no timing assumptions).
    let stop = LegacyFlag()
    let posterDone = TourSignal()
    Thread.detachNewThread {  // a thread, not a task: it must not hold a cooperative thread
        var posted = 0
        while !stop.isSet {
            posted += 1
            center.post(name: didSave, object: nil, userInfo: ["id": posted])
        }
        posterDone.open()
    }
    let ids = await saves.value
    stop.set()
    await posterDone.wait()
    say("notifications received in order by the loop: \(ids)")
    try check(ids.count == 3 && ids[2] == ids[0] + 2, "consecutive notifications, in order")

    // One delegate-owned source, several consumers, each with its own policy.
    let events = Broadcast<Int>(replay: 1)
    let all = Task { await events.stream(buffering: .unbounded).reduce(into: [Int]()) { $0.append($1) } }
    let newest = Task { await events.stream(buffering: .latest).reduce(into: [Int]()) { $0.append($1) } }
    await events.waitForSubscribers(2)
    for value in 1...50 { events.yield(value) }
    events.finish()
    let (everything, latest) = await (all.value, newest.value)
    say("Broadcast: an .unbounded consumer got \(everything.count) events, a .latest one ended with \(latest.last ?? -1)")
    try check(everything == Array(1...50) && latest.last == 50, "every consumer sees the events sent after it subscribed")

    // The same pipe through Bridges' reader: under a waiting policy it stops reading while the
    // buffer is full, the pipe fills, and the writer blocks until the reader catches up.
    do {
        let run = try await pipeWithASlowReader(total: pipeTotal) { $0.readChunks(buffering: .suspending(2)) }
        let ahead = pipeTotal - run.takenWhenWriterFinished
        say("the same pipe through fileHandle.readChunks(buffering: .suspending(2)):")
        say("  the writer finished with the reader \(ahead / 1024) KiB behind: the pipe's own buffer and at most 3 reads")
        try check(run.received == pipeTotal, "Bridges' reader received everything, got \(run.received)")
        try check(ahead <= 1024 * 1024 + 3 * 64 * 1024, "the writer ran \(ahead) bytes ahead of a .suspending(2) reader")
    }
} }


/// A pipe with a fast writer thread and a slow reader: returns how many bytes the reader had
/// taken when the writer finished writing, and how many it received in all. The reader stops
/// after `total` bytes (it does not wait for the end of file: the legacy reader below may never
/// report it on Linux once the writer has hung up).
func pipeWithASlowReader<Chunks: AsyncSequence>(
    total: Int, _ makeChunks: (FileHandle) -> Chunks
) async throws -> (takenWhenWriterFinished: Int, received: Int) where Chunks.Element == Data {
    let pipe = Pipe()
    let taken = LockedBox(0)
    let takenAtFinish = LockedBox(-1)
    let writer = pipe.fileHandleForWriting
    let writerDone = TourSignal()
    Thread.detachNewThread {  // the legacy side: a thread writing as fast as the pipe takes it
        let block = Data(repeating: 42, count: 64 * 1024)
        for _ in 0..<(total / block.count) { writer.write(block) }
        takenAtFinish.value = taken.value
        writerDone.open()
    }
    var received = 0
    for try await chunk in makeChunks(pipe.fileHandleForReading) {
        received += chunk.count
        taken.value = received
        for _ in 0..<1_000 { await Task.yield() }  // a slow consumer: some work per chunk
        if received >= total { break }
    }
    await writerDone.wait()
    try? writer.close()
    return (takenAtFinish.value, received)
}

/// The usual hand-written reader: `readabilityHandler` feeding an `AsyncStream` (unbounded).
func legacyChunks(_ handle: FileHandle) -> AsyncStream<Data> {
    AsyncStream { continuation in
        handle.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                continuation.finish()
            } else {
                continuation.yield(data)
            }
        }
        continuation.onTermination = { _ in handle.readabilityHandler = nil }
    }
}
