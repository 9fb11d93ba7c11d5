#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif
import Testing
import Bridges
@testable import BridgesCombine

#if canImport(Combine) || OpenCombine

@Suite struct FirstValueTests {
    struct Boom: Error, Equatable {}

    @Test func firstValue_requestsOne_thenCancels() async {
        let publisher = DemandRecordingPublisher<Int, Never>()
        let producer = Task { await publisher.send(7) }
        let value = await publisher.firstValue  // Failure == Never: no `try`
        _ = await producer.value
        #expect(value == 7)
        #expect(publisher.requests == [.max(1)])
        #expect(publisher.cancellationCount == 1)
        #expect(publisher.activeSubscriptionCount == 0)
    }

    @Test func firstValue_ofAnEmptyPublisher_isNil() async {
        #expect(await Empty<Int, Never>().firstValue == nil)
    }

    @Test func firstValue_throwsTheTypedFailure() async {
        do {
            _ = try await Fail<Int, Boom>(error: Boom()).firstValue
            Issue.record("expected a throw")
        } catch {
            #expect(error == Boom())  // `error` is Boom: typed throws survived
        }
    }

    @Test func value_throwsFinishedWithoutValue_forEmpty() async {
        await #expect(throws: CombineBridgeError.finishedWithoutValue) {
            try await Empty<Int, Never>().value
        }
    }

    @Test func cancellingTheTask_cancelsTheSubscription_exactlyOnce() async {
        let publisher = DemandRecordingPublisher<Int, Never>()
        let task = Task { try await publisher.value }
        await publisher.waitForDemand()
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(publisher.cancellationCount == 1)
        #expect(publisher.events == [.subscribed, .requested(.max(1)), .cancelled])
    }

    @Test func firstValue_inACancelledTask_returnsNilWithoutSubscribing() async {
        let publisher = DemandRecordingPublisher<Int, Never>()
        let gate = Gate()
        let task = Task {
            await gate.wait()
            return await publisher.firstValue
        }
        task.cancel()
        gate.open()
        #expect(await task.value == nil)
        #expect(publisher.subscriptionCount == 0)
    }

    @Test func cancelRacingValue_resumesExactlyOnce_stress() async {
        for i in 0..<300 {
            let publisher = DemandRecordingPublisher<Int, Never>()
            let task = Task { await publisher.firstValue }
            await publisher.waitForDemand()
            // The subscription has demand, so this is a legal send racing the cancel.
            let sender = Task { publisher.sendIgnoringDemand(i) }
            task.cancel()
            let value = await task.value
            await sender.value
            #expect(value == nil || value == i)
            #expect(publisher.cancellationCount == 1)
        }
    }

    @Test func worksWithASubject() async {
        let subject = CurrentValueSubject<String, Never>("ready")
        #expect(await subject.firstValue == "ready")
    }
}

#endif
