#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif
import Testing
import Bridges
@testable import BridgesCombine

#if canImport(Combine) || OpenCombine

/// The largest demand a publisher ever had outstanding (requested and not yet sent), from its log.
func maxOutstanding(_ events: [DemandRecordingPublisher<Int, Never>.Event]) -> Subscribers.Demand {
    var outstanding = Subscribers.Demand.none
    var maximum = Subscribers.Demand.none
    for event in events {
        switch event {
        case .requested(let demand): outstanding += demand
        case .sent: outstanding -= 1
        default: break
        }
        maximum = max(maximum, outstanding)
    }
    return maximum
}

@Suite(.timeLimit(.minutes(3))) struct PublisherStreamTests {
    struct Boom: Error, Equatable {}

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
                if value == 0 { started.open(); await release.wait() }
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
                if value == 0 { started.open(); await release.wait() }
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

#if canImport(Combine) || OpenCombine

@Suite(.timeLimit(.minutes(3))) struct PublisherStreamEdgeTests {
    /// Every policy that keeps an element nobody is waiting for yet (all but `.drop`).
    static let policies: [BufferingPolicy] = [.unbounded, .latest, .rendezvous, .suspending(1), .suspending(4), .dropNewest(2), .dropOldest(2)]

    @Test(arguments: policies)
    func synchronousPublishers_workUnderEveryPolicy(policy: BufferingPolicy) async throws {
        var justValues: [Int] = []
        for await value in Just(5).stream(buffering: policy) { justValues.append(value) }
        #expect(justValues == [5])
        var emptyCount = 0
        for await _ in Empty<Int, Never>().stream(buffering: policy) { emptyCount += 1 }
        #expect(emptyCount == 0)
        let subject = CurrentValueSubject<String, Never>("ready")
        var iterator = subject.stream(buffering: policy).makeAsyncIterator()
        #expect(await iterator.next() == "ready")
    }

    /// `.drop` keeps only what arrives while the consumer waits in `next()`. A synchronous
    /// publisher sends during the subscription, which happens on the first `next()` but before
    /// the consumer waits: the policy drops it, as it says (and `onDrop` sees it).
    @Test func drop_withASynchronousPublisher_dropsWhatIsSentDuringSubscription() async {
        let dropped = Counter()
        var values: [Int] = []
        for await value in Just(5).stream(buffering: .drop, onDrop: { _ in dropped.increment() }) { values.append(value) }
        #expect(values.isEmpty)
        #expect(dropped.value == 1)
    }

    /// The consumer is cancelled while upstream keeps sending: the subscription is cancelled
    /// exactly once, and what arrived is a gap-free prefix.
    @Test func cancelRacingEmission_cancelsExactlyOnce_stress() async {
        for _ in 0..<200 {
            let upstream = DemandRecordingPublisher<Int, Never>()
            let consumer = Task {
                var received: [Int] = []
                for await value in upstream.stream(buffering: .unbounded) { received.append(value) }
                return received
            }
            await upstream.waitForDemand()
            let producer = Task { for value in 0..<50 { upstream.sendIgnoringDemand(value) } }
            consumer.cancel()
            await producer.value
            let received = await consumer.value
            await upstream.waitForCancellation()
            #expect(upstream.cancellationCount == 1)
            #expect(!upstream.events.contains(.cancelledAgain))
            #expect(received == Array(0..<received.count))
        }
    }

    /// Upstream completes while the consumer is cancelled: the subscriber cancels at most once,
    /// and the stream ends exactly once. When the two race on different threads, the subscriber
    /// may decide to cancel before the completion reaches it, so the publisher can see that
    /// cancel after it completed (`.cancelledAgain`, a no-op in Combine); what must never happen
    /// is an effective cancel *and* a completion, or two cancels.
    @Test func completionRacingCancel_cancelsAtMostOnce_andEndsOnce_stress() async {
        for _ in 0..<200 {
            let upstream = DemandRecordingPublisher<Int, Never>()
            let consumer = Task { for await _ in upstream.stream(buffering: .rendezvous) {} }
            await upstream.waitForDemand()
            let completer = Task { upstream.send(completion: .finished) }
            consumer.cancel()
            await completer.value
            await consumer.value
            let events = upstream.events
            #expect(events.filter { $0 == .cancelled || $0 == .cancelledAgain }.count <= 1, "\(events)")
            #expect(events.filter { $0 == .cancelled || $0 == .completed }.count == 1, "\(events)")
        }
    }
}

#endif
