import Bridges
import BridgesTesting
import TestSupport
import Testing

@testable import BridgesCombine

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine

@Suite(.timeLimit(.minutes(3))) struct PublisherStreamTests {
    // MARK: - Demand per policy

    @Test func rendezvous_requestsOneElementPerNext() async {
        let upstream = DemandRecordingPublisher<Int, Never>()
        let stream = upstream.stream(buffering: .rendezvous)
        let consumer = Task {
            var iterator = stream.makeAsyncIterator()
            var received: [Int] = []
            for _ in 0..<3 { received.append(await iterator.next()!) }  // no `try`: Failure == Never
            return received
        }
        for value in 0..<3 { await upstream.send(value) }
        #expect(await consumer.value == [0, 1, 2])
        await upstream.waitForCancellation()  // the iterator was dropped: teardown cancelled
        #expect(upstream.requests == [.max(1), .max(1), .max(1)])
        #expect(maxOutstanding(upstream.events) == .max(1))
        #expect(upstream.cancellationCount == 1)
        #expect(upstream.activeSubscriptionCount == 0)
    }

    @Test func suspending_prefetchesN_thenReplenishesOnePerElementTaken() async {
        let upstream = DemandRecordingPublisher<Int, Never>()
        let stream = upstream.stream(buffering: .suspending(4))
        let consumer = Task {
            var received: [Int] = []
            for await value in stream {
                received.append(value)
                await Task.yield()  // a consumer slower than its producer
            }
            return received
        }
        for value in 0..<100 { await upstream.send(value) }
        upstream.send(completion: .finished)
        #expect(await consumer.value == Array(0..<100))
        #expect(upstream.requests.first == .max(4))
        #expect(upstream.requests.dropFirst().allSatisfy { $0 == .max(1) })
        // Never more outstanding demand than the buffer has room for.
        #expect(maxOutstanding(upstream.events) <= .max(4))
        #expect(upstream.cancellationCount == 0)  // it completed; completion is not cancelled
    }

    @Test(arguments: [BufferingPolicy.unbounded, .latest, .drop, .dropNewest(3), .dropOldest(3)])
    func lossyAndUnbounded_requestUnlimitedOnce(policy: BufferingPolicy) async {
        let upstream = DemandRecordingPublisher<Int, Never>()
        let stream = upstream.stream(buffering: policy)
        let consumer = Task { for await _ in stream {} }
        await upstream.waitForDemand()
        upstream.send(completion: .finished)
        await consumer.value
        #expect(upstream.requests == [.unlimited])
    }

    // MARK: - Cancellation

    @Test func cancellingTheConsumerTask_cancelsTheSubscriptionExactlyOnce() async {
        let log = DiagnosticLog()
        let upstream = DemandRecordingPublisher<Int, Never>()
        let stream = Diagnostics.withHandler(log.handler) { upstream.stream(buffering: .unbounded) }
        let consumer = Task { for await _ in stream {} }
        await upstream.waitForDemand()
        consumer.cancel()
        await consumer.value
        await upstream.waitForCancellation()
        #expect(upstream.cancellationCount == 1)
        #expect(!upstream.events.contains(.cancelledAgain))
        #expect(upstream.activeSubscriptionCount == 0)  // the subscriber was let go
        #expect(log.kinds.isEmpty)
    }

    @Test func breakingOut_cancelsOnce_andCompletionIsNeverCancelled() async {
        let upstream = DemandRecordingPublisher<Int, Never>()
        let consumer = Task {
            for await value in upstream.stream(buffering: .rendezvous) where value == 2 { break }
        }
        for value in 0..<3 { await upstream.send(value) }
        await consumer.value
        await upstream.waitForCancellation()
        #expect(upstream.cancellationCount == 1)
        upstream.send(completion: .finished)  // nobody left to complete
        #expect(upstream.events.filter { $0 == .completed }.isEmpty)
    }

    // MARK: - Completion

    @Test func failure_isRethrownWithItsType() async {
        let upstream = DemandRecordingPublisher<Int, Boom>()
        let stream: CallbackStream<Int, Boom> = upstream.stream(buffering: .unbounded)
        let consumer = Task { () -> (Int, Boom?) in
            var count = 0
            do {
                for try await _ in stream { count += 1 }
                return (count, nil)
            } catch {
                return (count, error as? Boom)
            }
        }
        await upstream.waitForDemand()
        upstream.sendIgnoringDemand(1)
        upstream.send(completion: .failure(Boom()))
        let (count, error) = await consumer.value
        #expect(count == 1)
        #expect(error == Boom())
        #expect(upstream.cancellationCount == 0)
    }

    /// The publisher fails while the consumer's loop body runs; then the consumer's task is
    /// cancelled. The failure had ended the stream first, so the loop throws it: a cancellation
    /// that comes after the end does not turn a failure into a normal end.
    @Test func failureWhileTheLoopBodyRuns_thenCancelled_throwsTheFailure() async {
        let upstream = DemandRecordingPublisher<Int, Boom>()
        let stream: CallbackStream<Int, Boom> = upstream.stream(buffering: .unbounded)
        let inBody = Gate()
        let proceed = Gate()
        let consumer = Task { () -> (Int, Boom?) in
            var count = 0
            do {
                for try await _ in stream {
                    count += 1
                    inBody.open()
                    await proceed.wait()
                }
                return (count, nil)
            } catch {
                return (count, error as? Boom)
            }
        }
        await upstream.waitForDemand()
        upstream.sendIgnoringDemand(1)
        await inBody.wait()
        upstream.send(completion: .failure(Boom()))
        consumer.cancel()
        proceed.open()
        let (count, error) = await consumer.value
        #expect(count == 1)
        #expect(error == Boom())
        #expect(upstream.activeSubscriptionCount == 0)
    }

    // MARK: - Misuse

    @Test func excessEmission_underRendezvous_isBufferedAndReported() async {
        let log = DiagnosticLog()
        let upstream = DemandRecordingPublisher<Int, Never>()
        let stream = Diagnostics.withHandler(log.handler) { upstream.stream(buffering: .rendezvous) }
        let allSent = Gate()
        let consumer = Task {
            var received: [Int] = []
            for await value in stream {
                received.append(value)
                // Hold 1 until everything is sent, so no further demand exists for 2 and 3.
                if received.count == 1 { await allSent.wait() }
            }
            return received
        }
        await upstream.waitForDemand()  // the consumer asked for one
        upstream.sendIgnoringDemand(1)
        upstream.sendIgnoringDemand(2)  // not asked for
        upstream.sendIgnoringDemand(3)  // not asked for
        upstream.send(completion: .finished)
        allSent.open()
        #expect(await consumer.value == [1, 2, 3])  // nothing lost
        #expect(log.kinds == [.excessEmission])  // once per stream and kind
        #expect(log.all.first?.occurrences == 2)  // both counted
        #expect(log.all.first?.message.contains("it was buffered beyond capacity, not dropped") == true)
        #expect(log.all.first?.message.contains("put .buffer(size:prefetch:whenFull:) in front of it") == true)
    }

    /// Demand from depth: after a publisher sent beyond its demand, draining the buffer requests
    /// only what the buffer has room for (old: one per element taken, 4 for 2 slots).
    @Test func suspending_afterExcessEmissions_outstandingDemandNeverAboveCapacity() async {
        let upstream = DemandRecordingPublisher<Int, Never>()
        let stream = Diagnostics.withHandler({ _ in }) { upstream.stream(buffering: .suspending(2)) }
        let started = Gate()
        let release = Gate()
        let consumer = Task {
            var received: [Int] = []
            for await value in stream {
                received.append(value)
                if value == 0 {
                    started.open()
                    await release.wait()
                }
            }
            return received
        }
        await upstream.send(0)
        await started.wait()  // demand 2 outstanding, buffer empty
        for value in 1...4 { upstream.sendIgnoringDemand(value) }  // 2 beyond demand: 4 buffered
        release.open()
        await upstream.send(5)  // sent once the drained buffer asked for it
        upstream.send(completion: .finished)
        #expect(await consumer.value == [0, 1, 2, 3, 4, 5])
        // Outstanding as the publisher counts it: an element sent beyond demand uses none.
        var outstanding = 0
        var worst = 0
        for event in upstream.events {
            switch event {
            case .requested(let demand): outstanding += demand.max ?? .max
            case .sent: outstanding = max(0, outstanding - 1)
            default: break
            }
            worst = max(worst, outstanding)
        }
        #expect(worst <= 2, "outstanding demand rose to \(worst) with room for 2: \(upstream.requests)")
    }

    @Test func excessEmission_underSuspending_isBufferedAndReported() async {
        let log = DiagnosticLog()
        let upstream = DemandRecordingPublisher<Int, Never>()
        let stream = Diagnostics.withHandler(log.handler) { upstream.stream(buffering: .suspending(2)) }
        let started = Gate()
        let release = Gate()
        let consumer = Task {
            var received: [Int] = []
            for await value in stream {
                received.append(value)
                if value == 0 {
                    started.open()
                    await release.wait()
                }
            }
            return received
        }
        await upstream.send(0)
        await started.wait()  // consumer holds 0; the buffer (2) is free again: demand 2
        for value in 1...4 { upstream.sendIgnoringDemand(value) }  // 3 and 4 are beyond demand
        release.open()
        upstream.send(completion: .finished)
        #expect(await consumer.value == [0, 1, 2, 3, 4])
        #expect(log.kinds == [.excessEmission])  // once per stream and kind
        #expect(log.all.first?.occurrences == 2)  // both counted
    }

    // MARK: - Cancellation

    /// A failing publisher's stream, its consumer's task cancelled: the loop throws
    /// `CancellationError` (it would otherwise read as the publisher having finished), and the
    /// subscription is cancelled once.
    @Test func failingPublisher_consumerCancelled_throwsCancellationError() async {
        let upstream = DemandRecordingPublisher<Int, any Error>()
        let stream = upstream.stream(buffering: .rendezvous)
        let first = Gate()
        let consumer = Task { () -> (received: [Int], cancelled: Bool) in
            var received: [Int] = []
            do {
                for try await value in stream {
                    received.append(value)
                    first.open()
                }
                return (received, false)
            } catch {
                return (received, error is CancellationError)
            }
        }
        await upstream.send(1)
        await first.wait()
        consumer.cancel()
        let (received, cancelled) = await consumer.value
        #expect(received == [1])
        #expect(cancelled)
        await upstream.waitForCancellation()
        #expect(upstream.cancellationCount == 1)
        #expect(upstream.activeSubscriptionCount == 0)
    }
}

#endif
