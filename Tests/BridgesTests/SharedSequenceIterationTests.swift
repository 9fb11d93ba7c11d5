import BridgesTesting
import Foundation
import TestSupport
import Testing

@testable import Bridges

// `shared()` at the edges of an iteration, written from its promises (SharedSequence's doc, and
// Kotlin's shareIn / SharingStressTest for the one-iteration-at-a-time rule):
// - one iteration at a time: a new iteration of the upstream starts only after the previous
//   one's task has returned, and consumers arriving meanwhile wait for it;
// - the end: a consumer belongs to the generation current when it starts; the generation moves
//   on when the iterating task receives the upstream's end;
// - a failing upstream: every consumer loop throws its failure (or `CancellationError` if it was
//   cancelled first), never ends normally, and the library reports no misuse of its own making.
@Suite("SharedSequence: iterations, ends and failures", .timeLimit(.minutes(3)))
struct SharedSequenceIterationTests {
    // MARK: - One iteration at a time

    /// An upstream whose `next()` suspends once: each consumer takes one element and leaves, and
    /// the next one arrives at once, while the stopped iteration's task may still be inside
    /// `next()`. It waits for that task to return instead of starting a second iteration beside it.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func takeOneAndLeave_aThousandRestarts_neverTwoIterationsAlive() async {
        let probe = NumbersProbe()
        let shared = Numbers(probe: probe).shared()  // never ends by itself
        let rounds = 1_000
        var stale: [Int] = []
        for _ in 0..<rounds {
            for await value in shared {
                if value != 1 { stale.append(value) }  // each consumer starts an iteration of its own
                break
            }
        }
        await probe.waitForStops(rounds)
        #expect(probe.alive.most == 1, "up to \(probe.alive.most) iterations of the upstream were alive at once")
        #expect(probe.starts.value == rounds)
        #expect(stale.isEmpty, "\(stale.count) consumers joined a stopped iteration: \(stale.prefix(5))")
        #expect(probe.alive.now == 0)
    }

    /// An upstream that notices its cancellation late (it waits at a gate that ignores it): the
    /// consumer arriving after the last one left is counted, and waits; the new iteration starts
    /// only when the stopped one's task has returned, and this consumer receives its first element.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func anUpstreamSlowToStop_theNextConsumerWaitsForItsTask_thenStartsAFreshIteration() async throws {
        try await withSerialTasks { () async throws in
            let gate = StubbornGate()
            let probe = NumbersProbe()
            let shared = HeldNumbers(heldAt: 2, gate: gate, probe: probe).shared()
            let first = shared.stream().record()
            #expect(try await first.next() == 1)
            await gate.arrived.wait()  // the iteration's task waits in the upstream's next()
            first.cancel()
            await first.waitForEnd()
            #expect(!shared.isIterating)
            #expect(shared.hasUnreturnedIteration)
            let second = shared.stream().record()
            await shared.waitForSubscribers(1)
            await runUntilIdle()
            #expect(shared.consumerCount == 1)
            #expect(probe.starts.value == 1, "a second iteration started beside the one still in next()")
            #expect(!shared.isIterating)
            gate.open()  // the stopped iteration's next() answers; its task returns
            #expect(try await second.next() == 1)  // from a fresh iteration
            #expect(probe.starts.value == 2)
            #expect(probe.alive.most == 1)
            second.cancel()
            await second.waitForEnd()
            await probe.waitForStops(2)
        }
    }

    /// Kotlin's SharingStressTest, re-expressed: rounds of five subscribers that start together,
    /// each checking that what it receives grows by one (no loss, no jump, one iteration per
    /// subscription), all cancelled once each has received enough; between rounds the stop
    /// timeout (virtual time) sometimes runs out and sometimes not. At most one iteration of the
    /// upstream is ever alive, and every subscriber received something.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test(arguments: [0, 1, 100], [false, true])
    func sharingStress_atMostOneIterationAlive_andEverySubscriberReceivesInOrder(replay: Int, timeout: Bool) async {
        let clock = TestClock()
        let probe = NumbersProbe()
        let shared = Numbers(probe: probe).shared(
            replay: replay, stopTimeout: timeout ? .after(.milliseconds(50), on: clock) : nil)
        let policies: [BufferingPolicy] = [.unbounded, .suspending(1), .rendezvous, .suspending(4), .unbounded]
        var generator = SplitMix(seed: UInt64(replay) &* 31 &+ (timeout ? 7 : 0))
        for round in 0..<50 {
            let tasks = policies.map { policy in
                let enough = Signal()
                let task = Task { () -> (count: Int, broken: String?) in
                    var (count, last, broken) = (0, 0, String?.none)
                    for await value in shared.stream(buffering: policy) {
                        // With replay a subscriber may start anywhere in the iteration; from
                        // there on, every element, one after another.
                        if last != 0 && value != last + 1 && broken == nil { broken = "\(last) then \(value)" }
                        last = value
                        count += 1
                        if count == 10 { enough.open() }
                    }
                    return (count, broken)
                }
                return (task, enough)
            }
            for (_, enough) in tasks { await enough.wait() }
            for (task, _) in tasks { task.cancel() }
            for (task, _) in tasks {
                let (count, broken) = await task.value
                #expect(count >= 10, "round \(round)")
                #expect(broken == nil, "round \(round): \(broken ?? "")")
            }
            if timeout && generator.next() % 3 == 0 {
                await clock.waitForSleepers(1)  // the stop timer the last subscriber started
                await clock.advance(by: .milliseconds(50))
            }
        }
        if timeout && shared.isIterating {
            await clock.waitForSleepers(1)
            await clock.advance(by: .milliseconds(50))
        }
        await probe.waitForStops(probe.starts.value)
        #expect(probe.alive.most == 1, "up to \(probe.alive.most) iterations of the upstream were alive at once")
        #expect(probe.alive.now == 0)
    }

    /// An upstream that cannot be iterated twice at once: `readChunks()` of one pipe. Consumers
    /// arrive one right after another left, each takes one chunk; each gets one (the pipe is kept
    /// full by a writer thread), none is refused as a second reader, and none hangs. (Each stop
    /// cancels the iteration inside `readChunks()`'s `next()`, whose teardown waits for the reader
    /// thread: the rounds are kept few for a suite that runs in parallel on 2 cores.)
    @Test func readChunksUpstream_consumersArrivingRightAfterAnotherLeft_eachGetAChunk() async throws {
        let pipe = Pipe()
        let writer = PipeWriter(pipe.fileHandleForWriting)
        try await expectDiagnostics([]) { () async throws in
            let shared = pipe.fileHandleForReading.readChunks().shared()
            var empty = 0
            for _ in 0..<100 {
                var received = false
                for await chunk in shared {
                    received = !chunk.isEmpty
                    break
                }
                if !received { empty += 1 }
            }
            #expect(empty == 0, "\(empty) of 100 consumers got no chunk")
            try #require(await writer.stop(draining: pipe.fileHandleForReading))
        }
    }

    // MARK: - The end of an iteration

    /// A consumer that starts once another consumer has received the upstream's end belongs to
    /// the next iteration: it receives neither the ended iteration's end nor, with `replay: 1`,
    /// its last element (the stale replay of JakeWharton/RxReplayingShare#25).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func aConsumerStartingAfterTheEndReachedAnother_belongsToTheNextIteration_withoutTheEndedReplay() async {
        let probe = NumbersProbe()
        let shared = Numbers(upTo: 3, probe: probe).shared(replay: 1)
        var wrong: [[Int]] = []
        for _ in 0..<500 {
            var received: [Int] = []
            for await value in shared { received.append(value) }
            if received != [1, 2, 3] { wrong.append(received) }
        }
        #expect(wrong.isEmpty, "\(wrong.count) of 500 consumers: \(wrong.prefix(5))")
        #expect(probe.starts.value == 500)
        #expect(probe.alive.most == 1)
    }

    /// The edge, exactly: a consumer that starts while the iterating task waits for the
    /// upstream's answer belongs to the running iteration, so if that answer is the end it
    /// receives the replay and then the end; one that starts after the task received the end
    /// belongs to the next iteration, with no replay. The task receives the end before any
    /// consumer does.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func aConsumerStartingWhileTheUpstreamAnswersItsEnd_belongsToTheEndingIteration() async throws {
        let upstream = DrivenUpstream<Never>()
        let shared = upstream.sequence.shared(replay: 1)
        let first = shared.stream().record()
        let sink = await upstream.nextIteration()
        await shared.waitForSubscribers(1)
        sink.yield(1)
        #expect(try await first.next() == 1)
        let during = shared.stream().record()  // the task waits in the upstream's next()
        await shared.waitForSubscribers(2)
        sink.finish()
        #expect(await during.elementsAtFinish() == [1])  // the replay, then the end
        #expect(await first.elementsAtFinish() == [1])
        let after = shared.stream().record()
        let restarted = await upstream.nextIteration()
        await shared.waitForSubscribers(1)
        restarted.yield(10)
        #expect(try await after.next() == 10)  // no replay of the ended iteration first
        restarted.finish()
        #expect(await after.elementsAtFinish() == [10])
        #expect(upstream.starts == 2)
    }

    /// The issue's race: a consumer started right after the upstream answered its end (the
    /// iterating task may not have received it yet) gets one of the two documented outcomes,
    /// never a mix: the ended iteration's replay and end, or a whole new iteration.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @Test func aConsumerStartingRightAfterTheUpstreamsEnd_getsTheEndedIterationOrANewOne_neverAMix() async {
        let answeredEnd = AnsweredEnd()
        let shared = NotifyingNumbers(upTo: 3, answeredEnd: answeredEnd).shared(replay: 1)
        var mixed: [[Int]] = []
        for _ in 0..<500 {
            let first = Task { for await _ in shared {} }
            await answeredEnd.next()
            var received: [Int] = []
            for await value in shared { received.append(value) }
            await first.value
            if received != [3] && received != [1, 2, 3] { mixed.append(received) }
            if received == [1, 2, 3] { await answeredEnd.next() }  // the second consumer's own iteration
        }
        #expect(mixed.isEmpty, "\(mixed.count) of 500 consumers: \(mixed.prefix(5))")
    }

    // MARK: - A failing upstream

    /// Every consumer loop of a failing upstream throws its failure, or `CancellationError` when
    /// the consumer was cancelled first; none ends as if the upstream had finished. Consumers are
    /// cancelled at every point of the race, and nothing is reported: the only finishes are the
    /// library's own.
    @Test(arguments: [0, 2])
    func failingUpstream_everyConsumerLoopThrows_neverEndsNormally_andNothingIsReported(elements: Int) async {
        enum Outcome: Hashable { case failed, cancelled, finished, finishedUncancelled, other }
        var outcomes: [Outcome: Int] = [:]
        await expectDiagnostics([]) {
            for round in 0..<1_000 {
                let shared: SharedSequence<Int, any Error> = FailingNumbers(count: elements).shared()
                let policies: [BufferingPolicy] = [.unbounded, .suspending(1), .latest, .rendezvous]
                let tasks = policies.map { policy in
                    Task.detached { () -> Outcome in
                        do {
                            for try await _ in shared.stream(buffering: policy) {}
                            return Task.isCancelled ? .finished : .finishedUncancelled
                        } catch is TestError {
                            return .failed
                        } catch is CancellationError {
                            return .cancelled
                        } catch {
                            return .other
                        }
                    }
                }
                // Cancel some consumers from another thread, racing with the failure's fan-out.
                let canceller = Task.detached {
                    for _ in 0..<(round % 5) { await Task.yield() }
                    tasks[round % tasks.count].cancel()
                    if round % 3 == 0 { tasks[(round + 1) % tasks.count].cancel() }
                }
                for task in tasks { outcomes[await task.value, default: 0] += 1 }
                await canceller.value
            }
        }
        #expect(outcomes[.finishedUncancelled] == nil, "\(outcomes)")
        #expect(outcomes[.other] == nil, "\(outcomes)")
        // A consumer cancelled after the failure had ended its stream throws that failure: the
        // stream ended as it ended.
        #expect(outcomes[.finished] == nil, "\(outcomes)")
        #expect(outcomes[.failed, default: 0] > 0, "\(outcomes)")
    }

    /// The window the stress test above races for, held open: a consumer whose stream has ended
    /// (its task was cancelled) but whose teardown has not unsubscribed it yet, when the
    /// upstream's failure is fanned out. Ending a stream that already ended is the library's own
    /// doing here, not the user's: nothing is reported, and the consumer's loop throws
    /// `CancellationError` (it was cancelled first).
    @Test func failureFannedOutToAConsumerThatLeftButHasNotUnsubscribedYet_reportsNothing() async throws {
        let broadcast = ThrowingBroadcast<Int, any Error>()
        let held = LockedState<Cancellation?>(nil)
        let consumer = await expectDiagnostics([]) { () async -> Task<String, Never> in
            // Subscribed as `shared()` subscribes its consumers, with the unsubscription held back.
            let stream = CallbackStream<Int, any Error> { sink in
                held.withLock { $0 = broadcast.subscribe(sink, waiting: false) }
                return Cancellation()
            }
            let consumer = Task { () -> String in
                do {
                    for try await _ in stream {}
                    return "finished"
                } catch {
                    return "\(type(of: error))"
                }
            }
            await broadcast.waitForSubscribers(1)
            consumer.cancel()
            _ = await consumer.value
            broadcast.finish(throwing: TestError(code: 5))
            return consumer
        }
        #expect(await consumer.value == "CancellationError")
        held.withLock { $0 }?.cancel()
    }

    /// The failure ends a consumer's stream while it is in its loop body; then its task is
    /// cancelled. The stream ended as it ended: the next `next()` throws the failure.
    @Test func failingUpstream_aConsumerCancelledAfterTheFailureEndedItsStream_stillThrowsTheFailure() async throws {
        let upstream = DrivenUpstream<TestError>()
        let shared: SharedSequence<Int, any Error> = upstream.sequence.shared()
        let inBody = Signal()
        let consumer = Task { () -> String in
            do {
                for try await _ in shared {
                    inBody.open()
                    await Signal().wait()  // until cancelled
                }
                return "finished"
            } catch let error as TestError {
                return "failed \(error.code)"
            } catch {
                return "threw \(error)"
            }
        }
        let witness = shared.stream().record()
        let sink = await upstream.nextIteration()
        await shared.waitForSubscribers(2)
        sink.yield(1)
        await inBody.wait()
        sink.finish(throwing: TestError(code: 4))
        // The broadcast decides the end into every consumer's stream at once: the witness has
        // it, so the consumer's stream (its consumer in the loop body) has it too.
        await witness.expectFailure(TestError(code: 4))
        consumer.cancel()
        let outcome = await consumer.value
        #expect(outcome == "failed 4", "the failure had ended the stream before the cancellation")
    }
}

// MARK: - Support

/// Writes 1 KiB blocks into a pipe on a thread of its own until stopped: a pipe kept full.
private final class PipeWriter: Sendable {
    private let stopping = LockedState(false)
    private let done = Signal()

    init(_ handle: FileHandle) {
        let block = Data(repeating: 7, count: 1_024)
        Thread.detachNewThread { [stopping, done] in
            while !stopping.withLock({ $0 }) {
                do { try handle.write(contentsOf: block) } catch { break }
            }
            try? handle.close()
            done.open()
        }
    }

    /// Stops the writer, reading what it still writes (a write blocked on a full pipe) until the
    /// end of the pipe; returns whether it stopped.
    func stop(draining reader: FileHandle) async -> Bool {
        stopping.withLock { $0 = true }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                while let data = try? reader.read(upToCount: 65_536), !data.isEmpty {}
                continuation.resume()
            }
        }
        await done.wait()
        return true
    }
}

/// 1 … `count`; each iteration's `next()` that answers the end first tells `answeredEnd`.
private struct NotifyingNumbers: AsyncSequence, Sendable {
    let upTo: Int
    let answeredEnd: AnsweredEnd

    struct AsyncIterator: AsyncIteratorProtocol {
        var last = 0
        let upTo: Int
        let answeredEnd: AnsweredEnd

        mutating func next() async -> Int? {
            await Task.yield()
            guard last < upTo else {
                answeredEnd.post()
                return nil
            }
            last += 1
            return last
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(upTo: upTo, answeredEnd: answeredEnd) }
}

/// Counts the ends the upstream answered; `next()` waits for the next one not yet waited for.
private final class AnsweredEnd: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    init() { (stream, continuation) = AsyncStream.makeStream(of: Void.self) }
    func post() { continuation.yield() }
    func next() async {
        for await _ in stream { return }
    }
}
