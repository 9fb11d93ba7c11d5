import BridgesTesting
import TestSupport
import Testing

@testable import Bridges

/// An upstream for `shared()` whose every iteration the test plays: each one is a
/// `CallbackStream` whose sink is handed to the test, whose start and stop (teardown) are
/// written to `log`, and whose teardown keeps a `LiveObject` alive until it ran.
final class DrivenUpstream<Failure: Error>: Sendable {
    typealias Sink = CallbackStream<Int, Failure>.Sink
    let log = Collected<String>()
    let live = LiveCount()
    private let sinks: AsyncStream<Sink>
    private let started: AsyncStream<Sink>.Continuation

    init() { (sinks, started) = AsyncStream.makeStream(of: Sink.self) }

    /// The upstream: every iteration starts a new producer.
    var sequence: CallbackStream<Int, Failure> {
        CallbackStream { [log, live, started] sink in
            log.append("start")
            let object = LiveObject(live)
            started.yield(sink)
            return Cancellation {
                log.append("stop")
                _ = object
            }
        }
    }

    /// The sink of the next iteration to start (waits for it). If the test is cancelled first
    /// (its time limit), records an issue and returns an ended stream's sink, so that the test
    /// fails instead of crashing the run.
    func nextIteration(sourceLocation: SourceLocation = #_sourceLocation) async -> Sink {
        for await sink in sinks { return sink }
        Issue.record(
            "the wait for the upstream's next iteration ended before it started: the test was cancelled (its time limit?)",
            sourceLocation: sourceLocation)
        return await endedSink()
    }

    var starts: Int { log.values.filter { $0 == "start" }.count }
    var stops: Int { log.values.filter { $0 == "stop" }.count }
}

/// 1, 2, 3, … up to `count` (or without end), counting pulls, and iterations started and
/// ended (an iteration ends when the iterating task releases its iterator). Each `next()`
/// first lets other tasks run, as a source doing I/O would.
struct Numbers: AsyncSequence, Sendable {
    let count: Int?
    let probe: NumbersProbe

    init(upTo count: Int? = nil, probe: NumbersProbe = NumbersProbe()) {
        self.count = count
        self.probe = probe
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var last = 0
        let count: Int?
        let probe: NumbersProbe
        let iteration: NumbersProbe.Iteration

        mutating func next() async -> Int? {
            await Task.yield()
            if let count, last == count { return nil }
            probe.pulls.increment()
            last += 1
            return last
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(count: count, probe: probe, iteration: NumbersProbe.Iteration(probe))
    }
}

final class NumbersProbe: Sendable {
    let pulls = Counter()
    let starts = Counter()
    let stops = Counter()
    /// Iterations alive now, and the most ever alive at once (Kotlin's SharingStressTest
    /// asserts "at most one copy of upstream can be running at any time").
    let alive = Overlap()
    private let stopped: AsyncStream<Void>
    private let stopping: AsyncStream<Void>.Continuation

    init() { (stopped, stopping) = AsyncStream.makeStream(of: Void.self) }

    /// Lives as long as one iteration's iterator.
    final class Iteration: Sendable {
        let probe: NumbersProbe
        init(_ probe: NumbersProbe) {
            self.probe = probe
            probe.alive.enter()
            probe.starts.increment()
        }
        deinit {
            probe.alive.leave()
            probe.stops.increment()
            probe.stopping.yield()
        }
    }

    /// Suspends until `count` iterations have ended.
    func waitForStops(_ count: Int) async {
        if stops.value >= count { return }
        for await _ in stopped where stops.value >= count { return }
    }
}

/// How many parties are inside something now, and the most that ever were at once.
final class Overlap: Sendable {
    private let state = LockedState<(now: Int, most: Int)>((0, 0))
    func enter() {
        state.withLock { state in
            state.now += 1
            state.most = max(state.most, state.now)
        }
    }
    func leave() { state.withLock { $0.now -= 1 } }
    var now: Int { state.withLock { $0.now } }
    var most: Int { state.withLock { $0.most } }
}

/// A gate that its waiters cannot leave early: `wait()` ignores cancellation (an upstream that
/// takes its time to notice that it was cancelled). `arrived` opens when the first waiter is in.
final class StubbornGate: Sendable {
    private let state = LockedState<(open: Bool, waiters: [UnsafeContinuation<Void, Never>])>((false, []))
    let arrived = Signal()

    func wait() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let open = state.withLock { state -> Bool in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            arrived.open()
            if open { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// 1, 2, 3, … without end, counted by `probe` as `Numbers` is; the `next()` that answers
/// `heldAt` first waits at `gate`, whether or not its task was cancelled meanwhile.
struct HeldNumbers: AsyncSequence, Sendable {
    let heldAt: Int
    let gate: StubbornGate
    let probe: NumbersProbe

    struct AsyncIterator: AsyncIteratorProtocol {
        var last = 0
        let heldAt: Int
        let gate: StubbornGate
        let iteration: NumbersProbe.Iteration

        mutating func next() async -> Int? {
            last += 1
            if last == heldAt { await gate.wait() }
            iteration.probe.pulls.increment()
            return last
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(heldAt: heldAt, gate: gate, iteration: NumbersProbe.Iteration(probe))
    }
}

/// 1 … `count`, then fails with `TestError(code: count)`; each `next()` first lets other tasks run.
struct FailingNumbers: AsyncSequence, Sendable {
    let count: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        var last = 0
        let count: Int

        mutating func next() async throws(TestError) -> Int? {
            await Task.yield()
            guard last < count else { throw TestError(code: count) }
            last += 1
            return last
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(count: count) }
}

/// How many `LiveObject`s of one count are alive.
final class LiveCount: Sendable {
    private let state = LockedState(0)
    func add(_ delta: Int) { state.withLock { $0 += delta } }
    var value: Int { state.withLock { $0 } }
}

/// Counted alive in its `LiveCount` from init to deinit.
final class LiveObject: Sendable {
    let count: LiveCount
    init(_ count: LiveCount) {
        self.count = count
        count.add(1)
    }
    deinit { count.add(-1) }
}

@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
extension Recorder {
    /// Waits for the end, expects a finish (not a failure), and returns every element received.
    func elementsAtFinish(sourceLocation: SourceLocation = #_sourceLocation) async -> [Element] {
        await waitForEnd()
        #expect(isFinished && failure == nil, sourceLocation: sourceLocation)
        return elements
    }
}
