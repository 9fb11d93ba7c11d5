// Every adapter, each as one op: what it creates (a legacy API, a delegate source, an owner) is a
// `Tracked` object, so the harness can tell that the bridge let go of it.

import Bridges
import BridgesCombine
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc  // sched_yield
#endif
#if os(Linux)
import BridgesTesting  // DemandRecordingPublisher (see Package.swift)
#endif
#if canImport(Combine)
import Combine  // Apple platforms: BridgesCombine is built on Apple's Combine, so the cases use its publishers
#else
import OpenCombine
#endif

struct SoakError: Error, Equatable { let code: Int }

/// A legacy completion-handler API: keeps the handler, calls it on its queue (or at once).
final class LegacyAPI<Handler: Sendable>: Tracked, @unchecked Sendable {
    func call(onThread: Bool, _ body: @escaping @Sendable () -> Void) {
        if onThread { DispatchQueue.global().async { withExtendedLifetime(self) { body() } } } else { body() }
    }
}

let calledBackOnThread: @Sendable (Int) -> Bool = { $0 % 4 == 0 }

// MARK: - Single-shot

func singleShotCases() -> [SoakCase] {
    [
        SoakCase("withCallback (Result)", elements: 1) { i, last in
            let api = LegacyAPI<Void>()
            last.set(api)
            let value = try await withCallback { (done: @escaping @Sendable (Result<Int, SoakError>) -> Void) in
                api.call(onThread: calledBackOnThread(i)) { done(.success(i)) }
            }
            return value == i ? 1 : 0
        },
        SoakCase("withCallback (T?, Error?) + Cancellation", elements: 1) { i, last in
            let api = LegacyAPI<Void>()
            last.set(api)
            let value: Int = try await withCallback { done in
                api.call(onThread: calledBackOnThread(i)) { done(i, nil) }
                Cancellation { _ = api }
            }
            return value == i ? 1 : 0
        },
        SoakCase("withCallback (T)", elements: 1) { i, last in
            let api = LegacyAPI<Void>()
            last.set(api)
            let value = try await withCallback { (done: @escaping @Sendable (Int) -> Void) in
                api.call(onThread: calledBackOnThread(i)) { done(i) }
            }
            return value == i ? 1 : 0
        },
        SoakCase("withCallback (Error?), failing", elements: 1) { i, last in
            let api = LegacyAPI<Void>()
            last.set(api)
            do {
                try await withCallback { (done: @escaping @Sendable ((any Error)?) -> Void) in
                    api.call(onThread: calledBackOnThread(i)) { done(SoakError(code: i)) }
                }
                return 0
            } catch let error as SoakError {
                return error.code == i ? 1 : 0
            }
        },
        SoakCase("withCallback ()", elements: 1) { i, last in
            let api = LegacyAPI<Void>()
            last.set(api)
            try await withCallback { (done: @escaping @Sendable () -> Void) in
                api.call(onThread: calledBackOnThread(i)) { done() }
            }
            return 1
        },
        // Misused through the default handler: every bridge's handler is called three times.
        SoakCase("withCallback called 3x (misuse)", elements: 1, reports: [.callbackCalledTwice: 1]) { i, last in
            let api = LegacyAPI<Void>()
            last.set(api)
            let value = try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                api.call(onThread: calledBackOnThread(i)) {
                    done(.success(i))
                    done(.success(-1))
                    done(.success(-2))
                }
            }
            return value == i ? 1 : 0
        },
        // Misused: the legacy API drops its handler; the bridge throws instead of hanging.
        SoakCase("withCallback dropped (misuse)", elements: 1, reports: [.callbackDropped: 1]) { i, last in
            let api = LegacyAPI<Void>()
            last.set(api)
            do {
                _ = try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                    api.call(onThread: calledBackOnThread(i)) { _ = done }
                }
                return 0
            } catch BridgeError.callbackDropped {
                return 1
            }
        },
        SoakCase("withTypedCallback", elements: 1) { i, last in
            let api = LegacyAPI<Void>()
            last.set(api)
            do throws(CallbackFailure<SoakError>) {
                let value = try await withTypedCallback {
                    (done: @escaping @Sendable (Result<Int, SoakError>) -> Void) in
                    api.call(onThread: calledBackOnThread(i)) {
                        done(i % 2 == 0 ? .success(i) : .failure(SoakError(code: i)))
                    }
                }
                return value == i ? 1 : 0
            } catch .failure(let error) {
                return error.code == i ? 1 : 0
            } catch {
                return 0
            }
        },
    ]
}

// MARK: - Streams

/// A producer object the stream keeps alive until its teardown.
final class Producer: Tracked, @unchecked Sendable {}

func callbackStreamCases() -> [SoakCase] {
    let lossless: [(String, BufferingPolicy)] = [
        (".unbounded", .unbounded), (".rendezvous", .rendezvous), (".suspending(2)", .suspending(2)),
    ]
    let lossy: [(String, BufferingPolicy)] = [
        (".latest", .latest), (".drop", .drop), (".dropOldest(2)", .dropOldest(2)), (".dropNewest(2)", .dropNewest(2)),
    ]
    var cases: [SoakCase] = []
    // The producer yields 4 from another thread, then finishes; the consumer takes them all.
    for (name, policy) in lossless {
        cases.append(
            SoakCase("CallbackStream \(name)", elements: 4) { i, last in
                let stream = CallbackStream<Int, Never>(buffering: policy) { sink in
                    let producer = Producer()
                    last.set(producer)
                    DispatchQueue.global().async {
                        withExtendedLifetime(producer) {
                            for value in 0..<4 { _ = sink.yield(value) }  // waiting policies enqueue and say "stop"
                            sink.finish()
                        }
                    }
                    return Cancellation { _ = producer }
                }
                var received = 0
                for await _ in stream { received += 1 }
                return received
            })
    }
    // Lossy: what the policy drops goes to onDrop; delivered + dropped adds up to 4.
    for (name, policy) in lossy {
        cases.append(
            SoakCase("CallbackStream \(name)", elements: 4) { i, last in
                let dropped = Count()
                let stream = CallbackStream<Int, Never>(buffering: policy, onDrop: { _ in dropped.add() }) { sink in
                    let producer = Producer()
                    last.set(producer)
                    for value in 0..<4 { _ = sink.yield(value) }
                    sink.finish()
                    return Cancellation { _ = producer }
                }
                var received = 0
                for await _ in stream { received += 1 }
                return received + dropped.current
            })
    }
    // Misused through the default handler: yields after finish, and a second and third finish.
    cases.append(
        SoakCase(
            "CallbackStream yield+finish after finish (misuse)", elements: 2,
            reports: [.yieldAfterFinish: 1, .finishCalledTwice: 1]
        ) { i, last in
            let stream = CallbackStream<Int, Never> { sink in
                let producer = Producer()
                last.set(producer)
                _ = sink.yield(1)
                _ = sink.yield(2)
                sink.finish()
                for value in 0..<8 { _ = sink.yield(value) }  // 8 occurrences, 1 report
                sink.finish()
                sink.finish()  // 2 occurrences, 1 report
                return Cancellation { _ = producer }
            }
            var received = 0
            for await _ in stream { received += 1 }
            return received
        })
    // A consumer waiting in next() is cancelled from another thread while its producer thread
    // yields, and the teardown waits for that thread to leave (FileHandle's reader's shape):
    // `Task.cancel()` returns every time, the loop ends after the teardown returned.
    // The teardowns run on Bridges' teardown queue (the cancellation handler decides the end)
    // and wait there for their producer thread, so Dispatch starts a few threads for that queue:
    // their per-thread allocations stay behind, the same whatever the op count (see
    // `teardownQueueTolerance`).
    cases.append(
        SoakCase(
            "CallbackStream cancel while waiting, teardown waits", ops: 100_000, elements: 1,
            tolerance: teardownQueueTolerance
        ) { i, last in
            let left = Count()
            // `.latest`: the producer never waits and the buffer stays one element deep.
            let stream = CallbackStream<Int, Never>(buffering: .latest) { sink in
                let producer = Producer()
                last.set(producer)
                let stop = Count()
                let gone = DispatchSemaphore(value: 0)
                Thread {
                    withExtendedLifetime(producer) {
                        var value = 0
                        while stop.current == 0 {
                            if case .terminated = sink.yield(value) { break }
                            value += 1
                            // Gives the core away after each element: the consumer drains the buffer
                            // and waits in next() (the state this case cancels in), and the canceller
                            // runs now, not a scheduler time slice later.
                            sched_yield()
                        }
                    }
                    left.add()
                    gone.signal()
                }.start()  // a thread of its own: a spinning producer must not hold a Dispatch worker
                return Cancellation {
                    stop.add()
                    gone.wait()
                }
            }
            let (started, first) = AsyncStream<Void>.makeStream()
            let consumer = Task {
                var received = 0
                for await _ in stream {
                    received += 1
                    if received == 1 { first.finish() }
                }
                return received
            }
            for await _ in started {}
            // From a Dispatch worker, not this task: a cancellation that blocked would hold that
            // thread, and the op would never return (the step's bound names the case).
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    consumer.cancel()  // never returned before the fix, after a few hundred ops
                    done.resume()
                }
            }
            let received = await consumer.value
            return received >= 1 && left.current == 1 ? 1 : 0
        })
    // The producer's `finish(throwing:)`, on a Dispatch worker, races the consumer's cancellation:
    // the loop ends as the stream ended, throwing the failure or `CancellationError`, never as
    // complete.
    // A failure that comes after the consumer's task ended the stream reaches nobody and is
    // reported, by design, in the few rounds where the cancel wins outright: those reports go to
    // a handler of the op's own (they are not the default-handler volume this soak measures).
    let ignore: Diagnostics.Handler = { _ in }
    cases.append(
        SoakCase("CallbackStream finish(throwing:) racing cancel", elements: 1) { i, last in
            let (sinks, handOver) = AsyncStream<CallbackStream<Int, any Error>.Sink>.makeStream()
            let stream = Diagnostics.withHandler(ignore) {
                CallbackStream<Int, any Error>(buffering: .unbounded) { sink in
                    let producer = Producer()
                    last.set(producer)
                    handOver.yield(sink)
                    handOver.finish()
                    return Cancellation { _ = producer }
                }
            }
            let consumer = Task { () -> Bool in
                do {
                    for try await _ in stream {}
                    return false  // ended as if complete
                } catch {
                    return true
                }
            }
            var arrived = sinks.makeAsyncIterator()
            guard let sink = await arrived.next() else { return 0 }
            DispatchQueue.global().async { sink.finish(throwing: SoakError(code: i)) }
            consumer.cancel()
            return await consumer.value ? 1 : 0
        })
    // The consumer takes an element and (usually) waits in `next()`; its task is cancelled and
    // then, once `cancel()` returned, the producer yields one more element, finishes and releases
    // its sink. Each op ends in one of the consistent ways, checked with every element accounted
    // for by the time the loop ended and no report (never `sinkDropped`):
    // - the consumer waited in `next()`: its stream ended at the cancel, so the late element is
    //   undelivered as `.terminated`, the teardown learns `.cancelled`, the loop throws
    //   `CancellationError` (the usual case);
    // - it had not parked yet and saw its cancellation before the finish: the same, the element
    //   undelivered as `.cancelled`;
    // - the finish came first: the teardown learned `.finished`; the loop throws
    //   `CancellationError` if the cancellation cut the late element off (undelivered,
    //   `.cancelled`), or ends as complete if it had already delivered it.
    cases.append(
        SoakCase("CallbackStream cancel, then finish: decided at the cancel", elements: 1) { i, last in
            let (sinks, handOver) = AsyncStream<CallbackStream<Int, any Error>.Sink>.makeStream()
            let learned = Mutex<String?>(nil)
            let lateElement = Mutex<UndeliveredReason?>(nil)
            let stream = CallbackStream<Int, any Error>(
                buffering: .unbounded, onUndelivered: { _, reason in lateElement.withLock { $0 = reason } }
            ) { sink in
                let producer = Producer()
                last.set(producer)
                sink.yield(i)
                handOver.yield(sink)
                handOver.finish()
                return .onTermination { termination in
                    _ = producer
                    learned.withLock { $0 = "\(termination)" }
                }
            }
            let delivered = Mutex<[Int]>([])
            let consumer = Task { () -> String in
                do {
                    for try await x in stream { delivered.withLock { $0.append(x) } }
                    return "finished"
                } catch is CancellationError {
                    return "cancelled"
                } catch {
                    return "\(error)"
                }
            }
            var arrived = sinks.makeAsyncIterator()
            guard let sink = await arrived.next() else { return 0 }
            consumer.cancel()
            let answer = sink.yield(-i)
            sink.finish()
            let ending = await consumer.value
            let teardown = learned.withLock { $0 }
            let late = lateElement.withLock { $0 }
            let got = delivered.withLock { $0 }
            switch (answer, late, teardown, ending) {
            case (.terminated, .terminated, "cancelled", "cancelled"),
                (.enqueued, .cancelled, "cancelled", "cancelled"),
                (.enqueued, .cancelled, "finished", "cancelled"):
                return got == [i] ? 1 : 0
            case (.enqueued, nil, "finished", "finished"):
                return got == [i, -i] ? 1 : 0
            default:
                // Says which combination broke the promise, so that a red run can be read.
                print(
                    "unexpected: yield answered \(answer), undelivered \(late.map { "\($0)" } ?? "none"),"
                        + " teardown learned \(teardown ?? "nothing"), loop \(ending), delivered \(got) (round \(i))")
                return 0
            }
        })
    return cases
}

func broadcastCases() -> [SoakCase] {
    [
        // A hot source with one subscriber; after finish, a yield is misuse (default handler).
        SoakCase("Broadcast + yield after finish (misuse)", elements: 4, reports: [.yieldAfterFinish: 1]) { i, last in
            let broadcast = Broadcast<Int>()
            let owner = Producer()
            last.set(owner)
            let consumer = Task {
                var received = 0
                for await _ in broadcast.stream(buffering: .unbounded) { received += 1 }
                return withExtendedLifetime(owner) { received }
            }
            await broadcast.waitForSubscribers(1)
            for value in 0..<4 { broadcast.yield(value) }
            broadcast.finish()
            broadcast.yield(99)
            broadcast.yield(100)
            return await consumer.value
        }
    ]
}

// MARK: - Delegates and Foundation sources

/// A legacy delegate source: holds its delegate weakly (the classic vanishing-delegate setup).
protocol TickDelegate: AnyObject {
    func tick(_ value: Int)
    func done()
}

final class TickSource: Tracked, @unchecked Sendable {
    weak var delegate: (any TickDelegate)?
    func start(ticks: Int) {
        DispatchQueue.global().async { [self] in
            for value in 0..<ticks { delegate?.tick(value) }
            delegate?.done()
        }
    }
}

final class TickProxy: DelegateProxy<Int, Never>, TickDelegate, @unchecked Sendable {
    func tick(_ value: Int) { _ = sink.yield(value) }
    func done() { sink.finish() }
}

/// A kind whose teardowns wait on Bridges' teardown queue: 220–450 KiB left behind over 100 000
/// ops (more under load, when Dispatch starts more threads for the queue), 250–360 KiB over
/// 400 000: the queue's threads, not the ops. 768 KiB still catches a leak of 8 B per op.
let teardownQueueTolerance = 768 * 1024

/// FileHandle streams read on a thread of their own (no libdispatch source since the
/// readabilityHandler version crashed libdispatch): 0–13 KiB left behind over 20 000 ops, so
/// 128 KiB catches a leak of 7 B per op.
let fileHandleTolerance = 128 * 1024

func foundationCases() -> [SoakCase] {
    let center = NotificationCenter()
    return [
        SoakCase("DelegateProxy", elements: 4) { i, last in
            let stream = CallbackStream<Int, Never> { sink in
                let source = TickSource()
                last.set(source)
                let proxy = TickProxy(sink)
                source.delegate = proxy  // weak: the stream keeps the proxy alive
                source.start(ticks: 4)
                return proxy.retained { source.delegate = nil }
            }
            var received = 0
            for await _ in stream { received += 1 }
            return received
        },
        // Posts until the consumer has taken 4 (posts before the observer is in are not seen).
        SoakCase("NotificationCenter stream", ops: 50_000, elements: 4) { i, last in
            let sender = Producer()
            last.set(sender)
            let name = Notification.Name("soak")
            let stream = center.notificationStream(named: name, object: sender) { _ in i }
            let done = Count()
            let consumer = Task {
                var received = 0
                for await _ in stream {
                    received += 1
                    if received == 4 { break }
                }
                done.add()
                return received
            }
            while done.current == 0 {
                center.post(name: name, object: sender)
                await Task.yield()
            }
            return await consumer.value
        },
        SoakCase("FileHandle.readLines", ops: 20_000, elements: 3, lanes: 2, tolerance: fileHandleTolerance) {
            i, last in
            let pipe = Pipe()
            let writer = Producer()
            last.set(writer)
            let lines = pipe.fileHandleForReading.readLines()
            let consumer = Task {
                var received = 0
                for await _ in lines { received += 1 }
                return received
            }
            withExtendedLifetime(writer) {
                pipe.fileHandleForWriting.write(Data("a\nb\nc\n".utf8))
                try? pipe.fileHandleForWriting.close()
            }
            let received = await consumer.value
            try? pipe.fileHandleForReading.close()
            return received
        },
        SoakCase(
            "FileHandle.readLines.suspending(1).break", ops: 20_000, elements: 1, lanes: 2,
            tolerance: fileHandleTolerance
        ) { i, last in
            // The consumer breaks while the reader is paused (or reading): the teardown wakes the
            // reader thread and waits for it, then both ends are closed at once.
            let pipe = Pipe()
            let writer = Producer()
            last.set(writer)
            let lines = pipe.fileHandleForReading.readLines(buffering: .suspending(1))
            withExtendedLifetime(writer) { pipe.fileHandleForWriting.write(Data("a\nb\nc\n".utf8)) }
            var received = 0
            for await _ in lines {
                received += 1
                break
            }
            try? pipe.fileHandleForWriting.close()
            try? pipe.fileHandleForReading.close()
            return received
        },
        SoakCase("FileHandle.readChunks", ops: 20_000, elements: 1, lanes: 2, tolerance: fileHandleTolerance) {
            i, last in
            let pipe = Pipe()
            let writer = Producer()
            last.set(writer)
            let chunks = pipe.fileHandleForReading.readChunks()
            let consumer = Task {
                var bytes = 0
                for await chunk in chunks { bytes += chunk.count }
                return bytes
            }
            withExtendedLifetime(writer) {
                pipe.fileHandleForWriting.write(Data("0123456789".utf8))
                try? pipe.fileHandleForWriting.close()
            }
            let bytes = await consumer.value
            try? pipe.fileHandleForReading.close()
            return bytes == 10 ? 1 : 0
        },
    ]
}

// MARK: - Combine

/// Subscribes, requests (optionally a bad `.none` first), and counts until completion.
// @unchecked: state behind a Mutex; the identifier is immutable.
final class CountingSubscriber<Input, Failure: Error>: Subscriber, @unchecked Sendable {
    let combineIdentifier = CombineIdentifier()
    private let state: Mutex<(count: Int, continuation: CheckedContinuation<Int, Never>?)>
    private let badDemandFirst: Bool

    init(badDemandFirst: Bool = false, _ continuation: CheckedContinuation<Int, Never>) {
        self.badDemandFirst = badDemandFirst
        state = Mutex((0, continuation))
    }

    func receive(subscription: any Subscription) {
        if badDemandFirst { subscription.request(.none) }  // misuse: reported as invalidDemand
        subscription.request(.unlimited)
    }

    func receive(_ input: Input) -> Subscribers.Demand {
        state.withLock { $0.count += 1 }
        return .none
    }

    func receive(completion: Subscribers.Completion<Failure>) {
        let (count, continuation) = state.withLock { state in
            defer { state.continuation = nil }
            return (state.count, state.continuation)
        }
        continuation?.resume(returning: count)
    }
}

func count<P: Publisher>(_ publisher: P, badDemandFirst: Bool = false) async -> Int {
    await withCheckedContinuation { continuation in
        publisher.subscribe(CountingSubscriber<P.Output, P.Failure>(badDemandFirst: badDemandFirst, continuation))
    }
}

/// An AsyncSequence of `count` Ints that holds `tracker` while it is iterated.
struct TrackedSequence: AsyncSequence, Sendable {
    let count: Int
    let tracker: Tracked
    struct AsyncIterator: AsyncIteratorProtocol {
        var next = 0
        let count: Int
        let tracker: Tracked
        mutating func next() async -> Int? {
            guard next < count else { return nil }
            defer { next += 1 }
            return next
        }
    }
    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(count: count, tracker: tracker) }
}

func combineCases() -> [SoakCase] {
    let policies: [(String, BufferingPolicy)] = [
        (".rendezvous", .rendezvous), (".suspending(2)", .suspending(2)), (".unbounded", .unbounded),
        (".latest", .latest), (".drop", .drop),
    ]
    var cases: [SoakCase] = policies.map { name, policy in
        // A synchronous publisher of 4: waiting policies get all 4 by demand; lossy ones drop
        // what arrives while nobody waits (to onDrop), so delivered + dropped is 4.
        SoakCase("publisher.stream \(name)", elements: 4) { i, last in
            let tracker = Producer()
            last.set(tracker)
            let dropped = Count()
            let stream = (0..<4).publisher
                .map { value in withExtendedLifetime(tracker) { value } }
                .stream(buffering: policy, onDrop: { _ in dropped.add() })
            var received = 0
            for await _ in stream { received += 1 }
            return received + dropped.current
        }
    }
    // Misused through the default handler: a publisher that ignores demand floods a rendezvous
    // stream with 7 unrequested elements. One report per stream; all 7 counted; none lost.
    // The harness reads each report's live count after the run (then lets go of the reports,
    // before measuring the heap).
    cases.append(
        SoakCase(
            "publisher.stream flood (misuse)", elements: 8, reports: [.excessEmission: 1], occurrences: 7
        ) { i, last in
            let upstream = DemandRecordingPublisher<Int, Never>()
            let tracker = Producer()
            last.set(tracker)
            let stream = upstream.map { value in withExtendedLifetime(tracker) { value } }.stream(
                buffering: .rendezvous)
            let gate = OneShotGate()
            let consumer = Task {
                var received = 0
                for await _ in stream {
                    received += 1
                    if received == 1 { await gate.wait() }  // no further demand until the flood is over
                }
                return received
            }
            await upstream.waitForDemand()
            for value in 0..<8 { upstream.sendIgnoringDemand(value) }
            upstream.send(completion: .finished)
            gate.open()
            return await consumer.value
        })
    cases.append(
        SoakCase("sequence.publisher()", elements: 4) { i, last in
            let tracker = Producer()
            last.set(tracker)
            return await count(TrackedSequence(count: 4, tracker: tracker).publisher())
        })
    cases.append(
        SoakCase("sequence.publisher() request(.none) (misuse)", elements: 4, reports: [.invalidDemand: 1]) { i, last in
            let tracker = Producer()
            last.set(tracker)
            return await count(TrackedSequence(count: 4, tracker: tracker).publisher(), badDemandFirst: true)
        })
    cases.append(
        SoakCase("AsyncFuture", elements: 1) { i, last in
            let tracker = Producer()
            last.set(tracker)
            return await count(AsyncFuture { withExtendedLifetime(tracker) { i } })
        })
    cases.append(
        SoakCase("firstValue", elements: 1) { i, last in
            let tracker = Producer()
            last.set(tracker)
            let first = try? await (0..<4).publisher.map { value in withExtendedLifetime(tracker) { value } }.firstValue
            return first == 0 ? 1 : 0
        })
    return cases
}

// MARK: - Back to callbacks, and lifetimes

final class Owner: Tracked, @unchecked Sendable {
    let bag = CancellationBag()
    let received = Count()
}

func producing(_ count: Int, last: LastObject) -> CallbackStream<Int, Never> {
    CallbackStream<Int, Never> { sink in
        let producer = Producer()
        last.set(producer)
        DispatchQueue.global().async {
            withExtendedLifetime(producer) {
                for value in 0..<count { _ = sink.yield(value) }
                sink.finish()
            }
        }
        return Cancellation { _ = producer }
    }
}

func lifetimeCases() -> [SoakCase] {
    [
        SoakCase("withCompletion", elements: 1) { i, last in
            let api = Producer()
            last.set(api)
            return await withCheckedContinuation { continuation in
                withCompletion({ (result: Result<Int, any Error>) in
                    continuation.resume(returning: (try? result.get()) == i ? 1 : 0)
                }) {
                    withExtendedLifetime(api) { i }
                }
            }
        },
        SoakCase("subscribe", elements: 4) { i, last in
            let stream = producing(4, last: last)
            let received = Count()
            return await withCheckedContinuation { continuation in
                _ = stream.subscribe(
                    onElement: { _ in received.add() },
                    onFinish: { _ in continuation.resume(returning: received.current) })
            }
        },
        SoakCase("forEach(weak:in:)", elements: 4) { i, last in
            let owner = Owner()
            let stream = producing(4, last: last)
            return await withCheckedContinuation { continuation in
                stream.forEach(weak: owner, in: owner.bag) { owner, _ in
                    owner.received.add()
                    if owner.received.current == 4 { continuation.resume(returning: 4) }
                }
            }
        },
        SoakCase("runTask(weak:)", elements: 1) { i, last in
            let owner = Owner()
            last.set(owner)
            return await withCheckedContinuation { continuation in
                runTask(
                    weak: owner, in: owner.bag, operation: { i },
                    then: { _, result in
                        continuation.resume(returning: (try? result.get()) == i ? 1 : 0)
                    })
            }
        },
    ]
}

// MARK: - Diagnostics themselves

func diagnosticsCases() -> [SoakCase] {
    [
        // The reproducer of the crash: reads of the default handler, then a call. Before the fix
        // each read wrapped the handler in one more thunk (~96 B), and the call overflowed the stack.
        SoakCase("Diagnostics.defaultHandler 20 reads + call", elements: 0, reports: [.other("soak-probe"): 1]) {
            i, _ in
            var handler = Diagnostics.defaultHandler
            for _ in 0..<19 { handler = Diagnostics.current }
            handler(BridgeDiagnostic(kind: .other("soak-probe"), message: "", fileID: #fileID, line: #line))
            return 0
        },
        // The task-local handler is a function in a generic container too (TaskLocal<Handler?>):
        // reads make a transient thunk, never a growing chain.
        SoakCase("Diagnostics.withHandler + 20 reads + call", elements: 0, reports: [.other("soak-probe"): 1]) { i, _ in
            Diagnostics.withHandler(reports.handler) {
                var handler = Diagnostics.current
                for _ in 0..<19 { handler = Diagnostics.current }
                handler(BridgeDiagnostic(kind: .other("soak-probe"), message: "", fileID: #fileID, line: #line))
            }
            return 0
        },
    ]
}

/// With the real default handler (standard error): three bridges each misused 100 000 times
/// print three lines, not 300 000.
func printToStandardErrorCase() -> SoakCase {
    SoakCase("printToStandardError: 3 floods x 100 000 (3 lines)", ops: 1, elements: 2 + 100_001, lanes: 1) { i, last in
        let flood = 100_000
        let api = LegacyAPI<Void>()
        last.set(api)
        let value = try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
            api.call(onThread: false) { for value in 0...flood { done(.success(value)) } }
        }
        let stream = CallbackStream<Int, Never> { sink in
            _ = sink.yield(1)
            sink.finish()
            for value in 0..<flood { _ = sink.yield(value) }
            return Cancellation()
        }
        var received = 0
        for await _ in stream { received += 1 }
        let upstream = DemandRecordingPublisher<Int, Never>()
        let gate = OneShotGate()
        let consumer = Task {
            var received = 0
            for await _ in upstream.stream(buffering: .rendezvous) {
                received += 1
                if received == 1 { await gate.wait() }
            }
            return received
        }
        await upstream.waitForDemand()
        for value in 0...flood { upstream.sendIgnoringDemand(value) }
        upstream.send(completion: .finished)
        gate.open()
        return (value == 0 ? 1 : 0) + received + (await consumer.value)
    }
}
