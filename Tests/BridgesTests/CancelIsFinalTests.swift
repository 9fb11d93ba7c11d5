import Bridges
import BridgesTesting
import Dispatch
import Foundation
import TestSupport
import Testing

/// An actor of the app's own that consumes a stream, and that the test can keep busy with a job
/// that blocks it, as a screen's actor busy with other work keeps a cancelled consumer from
/// running for a while. Its jobs run on a queue of their own (`QueueExecutor`), so blocking it
/// holds no thread of the cooperative pool, which the suite's other tests share.
actor BusyConsumer {
    let executor = QueueExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Runs a `for try await` over `stream` here; `received` opens after the first element.
    func consume(
        _ stream: CallbackStream<Int, any Error>, received: Gate
    ) async -> CallbackStreamCancellationEndTests.Ending {
        var values: [Int] = []
        do {
            for try await value in stream {
                values.append(value)
                received.open()
            }
            return .finished(values)
        } catch is CancellationError {
            return .cancelled(values)
        } catch {
            return .failed(values, "\(error)")
        }
    }

    /// Holds this actor until `release` is signalled: no other job of it runs meanwhile.
    func block(until release: DispatchSemaphore, blocked: Gate) {
        blocked.open()
        blockThread(until: release)
    }
}

/// "A cancel is final when it is made": once the consumer's task is cancelled while it
/// waits in `next()`, its stream ended as `.cancelled`, whatever the producer does before the
/// consumer's task gets to run, and a nonisolated teardown does not wait for that task.
@Suite("CallbackStream: a cancel is final when it is made", .timeLimit(.minutes(3)))
struct CancelIsFinalTests {
    typealias Ending = CallbackStreamCancellationEndTests.Ending

    /// A stream whose producer the test plays, recording why its teardown ran and what was left
    /// undelivered.
    struct Probed {
        let stream: CallbackStream<Int, any Error>
        let box = SinkBox<Int, any Error>()
        let terminations = Collected<String>()
        let undelivered = Collected<Int>()

        init() {
            let (box, terminations, undelivered) = (box, terminations, undelivered)
            stream = CallbackStream(buffering: .unbounded, onUndelivered: { value, _ in undelivered.append(value) }) {
                sink in
                box.set(sink)
                return .onTermination { termination in
                    switch termination {
                    case .finished: terminations.append("finished")
                    case .failed: terminations.append("failed")
                    case .cancelled: terminations.append("cancelled")
                    }
                }
            }
        }
    }

    /// Starts a consumer of `probed` on a `BusyConsumer`, waits until it is parked in `next()`
    /// with one element received, then blocks its actor. Returns the consumer's task and the
    /// semaphore that unblocks the actor.
    static func parkedConsumerOnABlockedActor(_ probed: Probed) async -> (Task<Ending, Never>, DispatchSemaphore) {
        let actor = BusyConsumer()
        let received = Gate()
        let consumer = Task { await actor.consume(probed.stream, received: received) }
        await probed.box.ready.wait()
        probed.box.sink.yield(1)
        await received.wait()
        // The blocking job runs only once the consumer's job has ended: it is parked in next().
        let release = DispatchSemaphore(value: 0)
        let blocked = Gate()
        Task { await actor.block(until: release, blocked: blocked) }
        await blocked.wait()
        return (consumer, release)
    }

    /// The consumer cannot run (its actor is busy); the producer finishes after the cancel: the
    /// teardown learns `.cancelled`, the producer is told `.terminated`, and the loop throws
    /// `CancellationError` once its actor is free.
    @Test func cancelWhileTheConsumersActorIsBusy_thenTheProducerFinishes_endsCancelled() async {
        let probed = Probed()
        let (consumer, release) = await Self.parkedConsumerOnABlockedActor(probed)
        consumer.cancel()
        // Decided by the cancel: the consumer's task has not run since.
        #expect(probed.box.sink.yield(2) == .terminated)
        #expect(probed.box.sink.isTerminated)
        probed.box.sink.finish()
        // The nonisolated teardown ran without the consumer's task, whose actor is still blocked.
        await probed.terminations.wait(count: 1)
        #expect(probed.terminations.values == ["cancelled"])
        release.signal()
        #expect(await consumer.value == .cancelled([1]))
        #expect(probed.terminations.values == ["cancelled"])
        #expect(probed.undelivered.values == [2], "the element yielded after the cancel is undelivered")
        probed.box.clear()
    }

    /// The same when the producer fails after the cancel: its error reaches nobody (reported), the
    /// loop throws `CancellationError`, not the producer's error.
    @Test func cancelWhileTheConsumersActorIsBusy_thenTheProducerFails_endsCancelled() async {
        await expectDiagnostics([.yieldAfterFinish]) {
            let probed = Probed()  // made here: its misuse is reported to this scope
            let (consumer, release) = await Self.parkedConsumerOnABlockedActor(probed)
            consumer.cancel()
            probed.box.sink.finish(throwing: Boom())  // reaches nobody: reported
            await probed.terminations.wait(count: 1)
            release.signal()
            #expect(await consumer.value == .cancelled([1]))
            #expect(probed.terminations.values == ["cancelled"])
            probed.box.clear()
        }
    }

    /// The producer drops its sink after the cancel: no false `sinkDropped` (the consumer ended
    /// the stream, the producer lost nothing), and the loop throws `CancellationError`.
    @Test func cancelWhileTheConsumersActorIsBusy_thenTheSinkIsReleased_isNoLostProducer() async {
        await expectDiagnostics([]) {
            let probed = Probed()
            let (consumer, release) = await Self.parkedConsumerOnABlockedActor(probed)
            consumer.cancel()
            probed.box.clear()  // the test held the only sink: released after the cancel
            await probed.terminations.wait(count: 1)
            release.signal()
            #expect(await consumer.value == .cancelled([1]))
            #expect(probed.terminations.values == ["cancelled"])
        }
    }

    /// Elements buffered when the cancel comes are undelivered at the cancel: the consumer that
    /// runs later receives none of them.
    @Test func elementsBufferedAtTheCancel_areUndelivered_notDeliveredLater() async {
        let probed = Probed()
        let actor = BusyConsumer()
        let received = Gate()
        let consumer = Task { await actor.consume(probed.stream, received: received) }
        await probed.box.ready.wait()
        let release = DispatchSemaphore(value: 0)
        let blocked = Gate()
        probed.box.sink.yield(1)
        await received.wait()
        Task { await actor.block(until: release, blocked: blocked) }
        await blocked.wait()
        consumer.cancel()
        for value in 2...4 { #expect(probed.box.sink.yield(value) == .terminated) }
        await probed.terminations.wait(count: 1)
        release.signal()
        #expect(await consumer.value == .cancelled([1]))
        #expect(probed.undelivered.values == [2, 3, 4])
        probed.box.clear()
    }

    /// `cancel()` racing `finish()` on two threads while the consumer's actor is busy, many
    /// rounds: the loop throws `CancellationError` exactly when the teardown learned `.cancelled`,
    /// and ends as complete exactly when it learned `.finished`; a false `sinkDropped` is never
    /// reported.
    @Test func cancelRacingFinish_withTheConsumersActorBusy_theLoopEndsAsTheTeardownLearned() async {
        var cancelled = 0
        var finished = 0
        for round in 0..<stressRounds(500) {
            let probed = Probed()
            let (consumer, release) = await Self.parkedConsumerOnABlockedActor(probed)
            let start = DispatchSemaphore(value: 0)
            let sink = probed.box.sink
            let both = DispatchGroup()
            DispatchQueue.global().async(group: both) {
                start.wait()
                consumer.cancel()
            }
            DispatchQueue.global().async(group: both) {
                start.wait()
                sink.finish()
            }
            start.signal()
            start.signal()
            await withCheckedContinuation { continuation in both.notify(queue: .global()) { continuation.resume() } }
            await probed.terminations.wait(count: 1)
            release.signal()
            let ending = await consumer.value
            let learned = probed.terminations.values
            switch ending {
            case .cancelled:
                #expect(learned == ["cancelled"], "round \(round)")
                cancelled += 1
            case .finished:
                #expect(learned == ["finished"], "round \(round)")
                finished += 1
            case .failed(_, let error): Issue.record("round \(round): \(error)")
            }
            probed.box.clear()
        }
        #expect(cancelled + finished == stressRounds(500))
    }
}
