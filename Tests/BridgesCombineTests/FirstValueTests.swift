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

    @Test func firstValue_requestsOne_thenCancels() async throws {
        let publisher = DemandRecordingPublisher<Int, Never>()
        let producer = Task { await publisher.send(7) }
        let value = try await publisher.firstValue  // Failure == Never: throws only CancellationError
        _ = await producer.value
        #expect(value == 7)
        #expect(publisher.requests == [.max(1)])
        #expect(publisher.cancellationCount == 1)
        #expect(publisher.activeSubscriptionCount == 0)
    }

    @Test func firstValue_ofAnEmptyPublisher_isNil() async throws {
        #expect(try await Empty<Int, Never>().firstValue == nil)
    }

    @Test func firstValue_throwsTheTypedFailure() async {
        do {
            _ = try await Fail<Int, Boom>(error: Boom()).firstValue
            Issue.record("expected a throw")
        } catch {
            #expect(error as? Boom == Boom())  // the publisher's own failure
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

    @Test func firstValue_inACancelledTask_throwsCancellationErrorWithoutSubscribing() async {
        let publisher = DemandRecordingPublisher<Int, Never>()
        let gate = Gate()
        let task = Task { () throws(CancellationError) -> Int? in
            await gate.wait()
            return try await publisher.firstValue
        }
        task.cancel()
        gate.open()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(publisher.subscriptionCount == 0)
    }

    /// `nil` used to mean both "finished without a value" and "cancelled".
    @Test func firstValue_cancelledWhileWaiting_throwsCancellationError_notNil() async {
        let publisher = DemandRecordingPublisher<Int, Never>()
        let task = Task { try await publisher.firstValue }
        await publisher.waitForDemand()
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(publisher.cancellationCount == 1)
    }

    @Test func cancelRacingValue_resumesExactlyOnce_stress() async {
        for i in 0..<300 {
            let publisher = DemandRecordingPublisher<Int, Never>()
            let task = Task { try? await publisher.firstValue }
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

    @Test func worksWithASubject() async throws {
        let subject = CurrentValueSubject<String, Never>("ready")
        #expect(try await subject.firstValue == "ready")
    }
}

#endif
