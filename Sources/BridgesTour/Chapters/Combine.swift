// swift-format-ignore-file
// (its snippet regions are MIGRATION.md's before/after blocks, line for line)
#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif
import Bridges
import BridgesCombine
import ExampleTesting
import Dispatch

#if canImport(Combine) || OpenCombine

@available(BridgesClock, *)
var combineChapter: Chapter { Chapter(name: "combine", title: "Publishers ⇄ AsyncSequence") {
    // Every part runs first and writes its observations on both sides; then the two blocks print.
    let report = CombineReport()
    try await slowConsumerTable(report)  // Combine's `.values` (macOS 12 / iOS 15), for contrast
    try await liveSlowConsumers(report)
    try await pipelineToForAwait(report)
    try await sequenceToPublisher(report)
    try await futureToAsync(report)

    block(.legacy, "Combine: .values, sink + store(in:), a subject pumped by a Task, Future")
    for line in report.legacyLines { say(line) }
    block(.bridge, "BridgesCombine: stream(buffering:), publisher(), AsyncFuture")
    for line in report.bridgeLines { say(line) }
} }

/// What the chapter observed on each side, printed as two blocks once every part has run.
final class CombineReport: @unchecked Sendable {  // used by the chapter's own task only, one part after another
    private(set) var legacyLines: [String] = []
    private(set) var bridgeLines: [String] = []
    func legacy(_ line: String) { legacyLines.append(line) }
    func bridge(_ line: String) { bridgeLines.append(line) }
}

// MARK: - One subject, every bridge, side by side

/// One `PassthroughSubject`, one consumer per bridge, all subscribed at once. Each consumer takes
/// 0 and is busy with it while the subject sends 1..<10 000 in one burst; then they all go on.
/// What each delivers is exactly what its demand and policy say, so every count is the same on
/// every run; the chapter checks what each policy promises.
@available(BridgesCombineValues, *)
private func slowConsumerTable(_ report: CombineReport) async throws {
    let total = 10_000
    let subject = CombineTourSubject()
    let requests = CombineTourCounter()
    let holding = CombineTourCounter()
    let release = CombineTourGate()
    let upstream = subject.subject.handleEvents(receiveRequest: { _ in requests.increment() }).eraseToAnyPublisher()
    // `.drop` delivers only to a consumer already suspended in `next()`, and its `.unlimited`
    // request can reach the subject before that: a single 0 could be dropped and the chapter would
    // wait forever for that consumer to hold it (seen once in forty runs). So `.drop` gets a subject
    // of its own that repeats 0 until the consumer has taken one, then the same burst.
    let dropSubject = CombineTourSubject()
    let dropHolding = CombineTourGate()
    let dropUpstream = dropSubject.subject.handleEvents(receiveRequest: { _ in requests.increment() }).eraseToAnyPublisher()

    func slowShow(_ value: Int) async {
        if value == 0 {
            holding.increment()
            await release.wait()
        }
    }
    let rows: [(String, String, CombineTourIterator)] = [
        (".values (Combine's own)", "request(1) per next()", CombineTourIterator(upstream.values)),
        (".stream(buffering: .unbounded)", "all, in order", CombineTourIterator(upstream.stream(buffering: .unbounded))),
        (".stream(buffering: .latest)", "the newest", CombineTourIterator(upstream.stream(buffering: .latest))),
        (".stream(buffering: .drop)", "only while waiting", CombineTourIterator(dropUpstream.stream(buffering: .drop), onFirst: dropHolding.open)),
        (".stream(buffering: .dropNewest(100))", "the first 100", CombineTourIterator(upstream.stream(buffering: .dropNewest(100)))),
        (".stream(buffering: .dropOldest(100))", "the last 100", CombineTourIterator(upstream.stream(buffering: .dropOldest(100)))),
        (".stream(buffering: .rendezvous)", "what was requested", CombineTourIterator(upstream.stream(buffering: .rendezvous))),
        (".stream(buffering: .suspending(8))", "what was requested", CombineTourIterator(upstream.stream(buffering: .suspending(8)))),
    ]
    let consumers = rows.map { row in
        Task {
            var received: [Int] = []
            while let value = try await row.2.next() {
                received.append(value)
                await slowShow(value)
            }
            return received
        }
    }
    await requests.wait(untilAtLeast: rows.count)  // every consumer is subscribed
    subject.subject.send(0)
    while !dropHolding.isOpen {  // see `dropSubject`: the only way to know `.drop`'s consumer waits is that it took a value
        dropSubject.subject.send(0)
        await Task.yield()
    }
    await holding.wait(untilAtLeast: rows.count)  // every consumer holds 0 and is busy
    for value in 1..<total {
        subject.subject.send(value)
        dropSubject.subject.send(value)
    }
    release.open()
    subject.subject.send(completion: .finished)
    dropSubject.subject.send(completion: .finished)

    // The same burst from a source that waits for demand: rendezvous loses nothing.
    let aware = DemandRecordingPublisher<Int, Never>()
    let awareConsumer = Task {
        var received: [Int] = []
        for await value in aware.stream(buffering: .rendezvous) { received.append(value) }
        return received
    }
    for value in 0..<total { await aware.send(value) }
    aware.send(completion: .finished)

    var delivered: [String: [Int]] = [:]
    for (row, consumer) in zip(rows, consumers) { delivered[row.0] = try await consumer.value }
    let awareReceived = await awareConsumer.value
    let header = "bridge".rightPadded(40) + "delivered  promise"
    func line(_ name: String, _ count: Int, _ promise: String) -> String {
        "  " + name.rightPadded(40) + String(count).leftPadded(9) + "  " + promise
    }
    let valuesCount = delivered[".values (Combine's own)"]!.count
    report.legacy("burst: a PassthroughSubject sends \(total) values while the consumer is busy with the first:")
    report.legacy("  " + header)
    report.legacy(line(".values (Combine's own)", valuesCount, "request(1) per next()"))
    TourFigures.shared.record("combine, burst: .values delivered \(valuesCount) of \(total); .stream(buffering: .unbounded) \(delivered[".stream(buffering: .unbounded)"]!.count) of \(total), in order")
    report.bridge("burst: the same subject, the same \(total) values, one consumer per bridge:")
    report.bridge("  " + header)
    for row in rows.dropFirst() { report.bridge(line(row.0, delivered[row.0]!.count, row.1)) }
    report.bridge(line(".rendezvous, demand-aware source", awareReceived.count, "all: the source waits for request(1)"))

    try check(delivered[".values (Combine's own)"]!.count < total, ".values should have lost the burst")
    try check(delivered[".stream(buffering: .unbounded)"]! == Array(0..<total), ".unbounded must deliver all, in order")
    try check(delivered[".stream(buffering: .latest)"]!.last == total - 1, ".latest must deliver the last value")
    try check(delivered[".stream(buffering: .dropNewest(100))"]! == [0] + Array(1...100), ".dropNewest(100) keeps the first 100")
    try check(
        delivered[".stream(buffering: .dropOldest(100))"]! == [0] + Array(total - 100..<total),
        ".dropOldest(100) keeps the last 100"
    )
    try check(awareReceived == Array(0..<total), "rendezvous over a demand-aware source must deliver all, in order")
}

/// The same comparison with consumers that really are slower than the producer: the lossy
/// counts depend on scheduling (so they are printed, not checked); the lossless ones do not.
@available(BridgesCombineValues, *)
private func liveSlowConsumers(_ report: CombineReport) async throws {
    let total = 10_000
    let subject = CombineTourSubject()
    let requests = CombineTourCounter()
    let upstream = CombineTourPublisher(subject.subject.handleEvents(receiveRequest: { _ in requests.increment() }).eraseToAnyPublisher())
    let throughValues = Task {
        var received: [Int] = []
        await consumeThroughValues(upstream.publisher) { value in
            received.append(value)
            await Task.yield()  // slower than the producer
        }
        return received
    }
    let throughStream = Task {
        var received: [Int] = []
        await consumeThroughStream(upstream.publisher) { value in
            received.append(value)
            await Task.yield()
        }
        return received
    }
    let throughLatest = Task {
        var received: [Int] = []
        for await value in upstream.publisher.stream(buffering: .latest) {
            received.append(value)
            await Task.yield()
        }
        return received
    }
    await requests.wait(untilAtLeast: 3)
    for value in 0..<total { subject.subject.send(value) }
    subject.subject.send(completion: .finished)
    let results = [await throughValues.value, await throughStream.value, await throughLatest.value]
    report.legacy("live: consumers awaiting between elements: .values delivered \(results[0].count) of \(total) (varies with scheduling)")
    TourFigures.shared.record("combine, live (consumer awaits between elements): .values delivered \(results[0].count) of \(total), varying run to run; .unbounded \(results[1].count)")
    report.bridge("live: .stream(buffering: .unbounded) delivered \(results[1].count) of \(total); .latest \(results[2].count), the last being \(results[2].last ?? -1)")
    try check(results[1] == Array(0..<total), ".unbounded must deliver all, in order")
    try check(results[2].last == total - 1, ".latest must deliver the last value")
}

// MARK: - Snippets for MIGRATION.md

/// `valuesLoses.before`: Combine's own bridge.
@available(BridgesCombineValues, *)
private func consumeThroughValues(_ subject: AnyPublisher<Int, Never>, show: (Int) async -> Void) async {
    // snippet:begin valuesLoses.before
    for await value in subject.values {
        await show(value)
    }
    // snippet:end valuesLoses.before
}

/// `valuesLoses.after`: the same loop, nothing lost.
private func consumeThroughStream(_ subject: AnyPublisher<Int, Never>, show: (Int) async -> Void) async {
    // snippet:begin valuesLoses.after
    for await value in subject.stream(buffering: .unbounded) {
        await show(value)
    }
    // snippet:end valuesLoses.after
}

/// A login form in the style of scenario 5 (subjects, so that the tour can complete them).
final class CombineTourLoginForm: @unchecked Sendable {  // only its subject is shared; subjects lock
    let password = CurrentValueSubject<String, Never>("")
}

/// A stand-in for a UIKit button.
final class CombineTourButton {
    var isEnabled = false
}

private func pipelineToForAwait(_ report: CombineReport) async throws {
    let script = ["s", "secret", "secret-pw", "short", "secret-pw!"]

    // Before: Combine, a sink stored in a set.
    let sinkFinal: Bool
    do {
        let form = CombineTourLoginForm()
        let button = CombineTourButton()
        // snippet:begin combinePipeline.before
        var cancellables = Set<AnyCancellable>()
        form.password
            .map { $0.count >= 8 }
            .removeDuplicates()
            .sink { canLogin in button.isEnabled = canLogin }
            .store(in: &cancellables)
        // snippet:end combinePipeline.before
        for text in script { form.password.send(text) }
        sinkFinal = button.isEnabled
        report.legacy("sink + store(in:): the button ends \(button.isEnabled)")
    }

    // After: for await, in a task, with .latest (UI state: only the newest matters).
    let form = CombineTourLoginForm()
    let subscribed = CombineTourGate()
    let done = CombineTourGate()
    let observed = Task { () -> Bool in
        let button = CombineTourButton()
        let form = CombineTourObservedForm(form: form, subscribed: subscribed)
        // snippet:begin combinePipeline.after
        for await canLogin in form.password
            .map({ $0.count >= 8 })
            .removeDuplicates()
            .stream(buffering: .latest) {
            button.isEnabled = canLogin
        }
        // snippet:end combinePipeline.after
        done.open()
        return button.isEnabled
    }
    await subscribed.wait()
    for text in script { form.password.send(text) }
    form.password.send(completion: .finished)
    let forAwaitFinal = await observed.value
    await done.wait()
    report.bridge("for await over .stream(buffering: .latest): the button ends \(forAwaitFinal), as with the sink")
    try check(forAwaitFinal == sinkFinal, "the migrated loop must end in the same state as the sink")
}

/// Wraps the form so the tour knows when the loop has subscribed (a gate, not a sleep).
///
/// The gate opens when the subject's current value is on its way down, not at the request: a
/// `CurrentValueSubject` reads its current value at the request and delivers it afterwards, so
/// values sent in between could arrive before that stale one (seen once in forty runs on a
/// loaded machine, as a migrated loop ending `false`).
struct CombineTourObservedForm {
    let password: AnyPublisher<String, Never>
    init(form: CombineTourLoginForm, subscribed: CombineTourGate) {
        password = form.password.handleEvents(receiveOutput: { _ in subscribed.open() }).eraseToAnyPublisher()
    }
}

/// Ticks 0..<count; every iterator starts from 0 (a cold sequence).
struct CombineTourTicks: AsyncSequence, Sendable {
    let count: Int
    struct AsyncIterator: AsyncIteratorProtocol {
        var next = 0
        let count: Int
        mutating func next() async -> Int? {
            guard next < count else { return nil }
            defer { next += 1 }
            return next
        }
    }
    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(count: count) }
}

private func sequenceToPublisher(_ report: CombineReport) async throws {
    let ticks = CombineTourTicks(count: 100)

    // Before: a subject pumped by a task. The subject is hot and ignores demand.
    let pumped: Int
    do {
        // snippet:begin exposeSequence.before
        nonisolated(unsafe) let subject = PassthroughSubject<Int, Never>()  // not Sendable
        let pump = Task {
            for await tick in ticks { subject.send(tick) }
            subject.send(completion: .finished)
        }
        let publisher = subject.eraseToAnyPublisher()
        // snippet:end exposeSequence.before
        _ = await pump.value
        // A subscriber that arrives after the pump ran gets nothing (and one that arrives during
        // it gets whatever is left, regardless of the demand it asked for).
        pumped = await publisher.collectAll()
        report.legacy("a PassthroughSubject pumped by a Task: a subscriber arriving afterwards got \(pumped) of 100")
    }

    // After: a real publisher; each subscriber iterates its own iterator, only as far as asked.
    // snippet:begin exposeSequence.after
    let publisher = ticks.publisher().eraseToAnyPublisher()
    // snippet:end exposeSequence.after
    let first = try await publisher.value  // requests exactly one, then cancels the iteration
    let all = await publisher.collectAll()
    report.bridge("ticks.publisher(): .value → \(first) (one element requested), a second subscriber got \(all) of 100")
    try check(pumped == 0, "the hot subject drops what nobody was subscribed for")
    try check(first == 0 && all == 100, "each subscription iterates the sequence from the start")
}

/// A legacy API with both a completion-handler and an async entry point, counting calls.
final class CombineTourAPI: Sendable {
    let calls = CombineTourCounter()
    let cancelled = CombineTourGate()

    /// Calls back at once, on the caller's thread (a legacy API that predates `@Sendable`).
    func load(completion: @escaping (Result<String, any Error>) -> Void) {
        calls.increment()
        completion(.success("user-42"))
    }

    func load() async throws -> String {
        calls.increment()
        return "user-42"
    }

    /// Never returns on its own; records when its task is cancelled.
    func slowLoad() async throws -> String {
        calls.increment()
        await withTaskCancellationHandler {
            await cancelled.wait()
        } onCancel: {
            cancelled.open()
        }
        throw CancellationError()
    }
}

private func futureToAsync(_ report: CombineReport) async throws {
    do {
        let api = CombineTourAPI()
        // snippet:begin futureAsync.before
        let load = Future<String, any Error> { promise in
            api.load { result in promise(result) }
        }
        let user = try await load.value
        // snippet:end futureAsync.before
        let eager = Future<String, any Error> { promise in api.load { result in promise(result) } }
        try check(api.calls.value == 2, "Combine's Future is eager: it ran before anyone subscribed")
        _ = eager
        report.legacy("Future: \(user); creating a second Future called the API before anyone subscribed (\(api.calls.value) calls)")
    }
    do {
        let api = CombineTourAPI()
        // snippet:begin futureAsync.after
        let load = AsyncFuture { try await api.load() }
        let user = try await load.value
        // snippet:end futureAsync.after
        try check(user == "user-42" && api.calls.value == 1, "AsyncFuture must run once for one await")
        let lazy = AsyncFuture { try await api.load() }
        try check(api.calls.value == 1, "AsyncFuture is lazy: nothing runs before a subscriber asks")
        _ = lazy
        report.bridge("AsyncFuture: \(user); creating a second one called nothing (\(api.calls.value) call): it runs once per subscriber, when asked")
    }
    // Cancellation reaches the async work: the awaiting task is cancelled, the subscription is
    // cancelled, and so is the task running the operation.
    let api = CombineTourAPI()
    let waiting = Task { try await AsyncFuture { try await api.slowLoad() }.value }
    await api.calls.wait(untilAtLeast: 1)
    waiting.cancel()
    await api.cancelled.wait()
    let outcome = await waiting.result
    report.bridge("awaiting task cancelled → the operation's task saw the cancellation; the await threw \((try? outcome.get()) == nil ? "an error" : "nothing")")
    try check((try? outcome.get()) == nil, "a cancelled await must throw")
}

// MARK: - Glue for the tour

extension Publisher where Failure == Never, Output: Sendable {
    /// Subscribes, takes everything until completion, and returns how many values arrived.
    func collectAll() async -> Int {
        var count = 0
        for await _ in stream(buffering: .unbounded) { count += 1 }
        return count
    }
}

extension Publisher where Output: Sendable {
    /// The same for a publisher that may fail (a failure ends the count): below macOS 15 / iOS 18
    /// `sequence.publisher()` of the tour's own sequence fails with `any Error` (the OS's runtime
    /// has no `AsyncSequence.Failure` to say it never fails).
    func collectAll() async -> Int {
        var count = 0
        do {
            for try await _ in stream(buffering: .unbounded) { count += 1 }
        } catch {}
        return count
    }
}

/// A type-erased publisher handed to consumer tasks: it wraps a subject, which locks internally.
struct CombineTourPublisher: @unchecked Sendable {
    let publisher: AnyPublisher<Int, Never>
    init(_ publisher: AnyPublisher<Int, Never>) { self.publisher = publisher }
}

/// A subject handed to consumer tasks; OpenCombine's and Combine's subjects lock internally.
final class CombineTourSubject: @unchecked Sendable {
    let subject = PassthroughSubject<Int, Never>()
}

/// Any bridge's iterator behind one type. It is created here and used by one consumer task
/// only (OpenCombine's `AsyncPublisher` is not Sendable, hence the unchecked conformance).
final class CombineTourIterator: @unchecked Sendable {
    private let nextElement: () async throws -> Int?
    /// `onFirst`: called when the first element arrives, before it is returned.
    init<S: AsyncSequence>(_ sequence: S, onFirst: @escaping @Sendable () -> Void = {}) where S.Element == Int {
        var iterator = sequence.makeAsyncIterator()
        var first = true
        nextElement = {
            let element = try await iterator.next()
            if first, element != nil { first = false; onFirst() }
            return element
        }
    }
    func next() async throws -> Int? { try await nextElement() }
}

/// A one-shot gate: `wait()` returns once `open()` was called (before or after).
final class CombineTourGate: @unchecked Sendable {  // `isOpen` and `waiters` are guarded by `lock`
    private let lock = DispatchSemaphore(value: 1)
    private var _isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    var isOpen: Bool { lock.wait(); defer { lock.signal() }; return _isOpen }

    @Sendable func open() {
        lock.wait()
        _isOpen = true
        let waiting = waiters
        waiters = []
        lock.signal()
        for waiter in waiting { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            lock.wait()
            if _isOpen {
                lock.signal()
                continuation.resume()
            } else {
                waiters.append(continuation)
                lock.signal()
            }
        }
    }
}

/// A counter whose value can be awaited.
final class CombineTourCounter: @unchecked Sendable {  // `count` and `waiters` are guarded by `lock`
    private let lock = DispatchSemaphore(value: 1)
    private var count = 0
    private var waiters: [(Int, CheckedContinuation<Void, Never>)] = []

    var value: Int { lock.wait(); defer { lock.signal() }; return count }

    func increment() {
        lock.wait()
        count += 1
        let ready = waiters.filter { $0.0 <= count }
        waiters.removeAll { $0.0 <= count }
        lock.signal()
        for (_, waiter) in ready { waiter.resume() }
    }

    func wait(untilAtLeast target: Int) async {
        await withCheckedContinuation { continuation in
            lock.wait()
            if count >= target {
                lock.signal()
                continuation.resume()
            } else {
                waiters.append((target, continuation))
                lock.signal()
            }
        }
    }
}

private extension String {
    func rightPadded(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}

#else

@available(BridgesClock, *)
var combineChapter: Chapter { Chapter(name: "combine", title: "Publishers ⇄ AsyncSequence") {
    throw ChapterSkipped("this build has no Combine. On Linux run the tour with the OpenCombine trait: swift run --traits OpenCombine BridgesTour")
} }

#endif
