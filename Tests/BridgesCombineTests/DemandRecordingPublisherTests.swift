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

@Suite(.timeLimit(.minutes(3))) struct DemandRecordingPublisherTests {
    @Test func records_subscribe_requests_andCancel_inOrder() async {
        let publisher = DemandRecordingPublisher<Int, Never>()
        let subscriber = RecordingSubscriber<Int, Never>(initialDemand: .max(2))
        publisher.subscribe(subscriber)
        subscriber.request(.unlimited)
        subscriber.cancel()
        #expect(publisher.events == [.subscribed, .requested(.max(2)), .requested(.unlimited), .cancelled])
        #expect(publisher.requests == [.max(2), .unlimited])
        #expect(publisher.cancellationCount == 1)
        #expect(publisher.activeSubscriptionCount == 0)
    }

    @Test func send_waitsForDemand_andNeverExceedsIt() async {
        let publisher = DemandRecordingPublisher<Int, Never>()
        let subscriber = RecordingSubscriber<Int, Never>()
        let producer = Task {
            for value in 0..<3 { await publisher.send(value) }
        }
        publisher.subscribe(subscriber)
        await publisher.wait { $0.subscriptionCount == 1 }
        #expect(subscriber.inputs.isEmpty)  // no demand yet: send() is suspended
        subscriber.request(.max(1))
        await subscriber.wait(forInputs: 1)
        subscriber.request(.max(2))
        _ = await producer.value
        #expect(subscriber.inputs == [0, 1, 2])
        #expect(subscriber.excess == 0)
        #expect(publisher.excessEmissions == 0)
        #expect(publisher.outstandingDemand == .none)
    }

    @Test func sendIgnoringDemand_deliversAndCountsTheExcess() {
        let publisher = DemandRecordingPublisher<Int, Never>()
        let subscriber = RecordingSubscriber<Int, Never>(initialDemand: .max(1))
        publisher.subscribe(subscriber)
        publisher.sendIgnoringDemand(1)
        publisher.sendIgnoringDemand(2)
        #expect(subscriber.inputs == [1, 2])
        #expect(publisher.excessEmissions == 1)
        #expect(subscriber.excess == 1)
    }

    @Test func requestNone_isRecordedAndReported() {
        let log = DiagnosticLog()
        let publisher = Diagnostics.withHandler(log.handler) { DemandRecordingPublisher<Int, Never>() }
        let subscriber = RecordingSubscriber<Int, Never>()
        publisher.subscribe(subscriber)
        subscriber.request(.none)
        #expect(publisher.requests == [.none])
        #expect(log.kinds == [.invalidDemand])
        #expect(publisher.outstandingDemand == .none)
    }

    @Test func secondCancel_isRecordedSeparately_andCompletionReleasesTheSubscriber() async {
        let publisher = DemandRecordingPublisher<Int, Never>()
        let released = Gate()
        do {
            let subscriber = RecordingSubscriber<Int, Never>(deinitGate: released)
            publisher.subscribe(subscriber)
            publisher.send(completion: .finished)
            #expect(subscriber.completions.count == 1)
        }
        await released.wait()
        #expect(publisher.events == [.subscribed, .completed])
        #expect(publisher.activeSubscriptionCount == 0)
    }

    @Test func send_whenTheWaitingTaskIsCancelled_returnsFalseAndSendsNothing() async {
        let publisher = DemandRecordingPublisher<Int, Never>()
        let task = Task { await publisher.send(1) }
        task.cancel()
        #expect(await task.value == false)
        #expect(publisher.events.isEmpty)
    }
}

#endif
