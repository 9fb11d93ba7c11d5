import Bridges
import BridgesTesting
import Testing

@testable import BridgesCombine

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine

@Suite(.timeLimit(.minutes(3))) struct PublisherStreamEdgeTests {
    /// Every policy that keeps an element nobody is waiting for yet (all but `.drop`).
    static let policies: [BufferingPolicy] = [
        .unbounded, .latest, .rendezvous, .suspending(1), .suspending(4), .dropNewest(2), .dropOldest(2),
    ]

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
        for await value in Just(5).stream(buffering: .drop, onDrop: { _ in dropped.increment() }) {
            values.append(value)
        }
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
