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

@Suite(.timeLimit(.minutes(3))) struct FirstValueTests {
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

    /// Cancellation is not "finished without a value": that one is `nil`.
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

    // MARK: - On the engine: order of events, completion vs. cancel, diagnostics

    /// The upstream is cancelled after the value, and before `firstValue` returns: exactly
    /// subscribed, one request of one, cancelled, in that order, and nothing left subscribed.
    @Test func firstValue_cancelsUpstreamAfterTheValue_beforeReturning() async throws {
        let publisher = DemandRecordingPublisher<Int, Never>()
        let producer = Task { await publisher.send(7) }
        let value = try await publisher.firstValue
        #expect(value == 7)
        #expect(publisher.events == [.subscribed, .requested(.max(1)), .sent, .cancelled])
        #expect(publisher.activeSubscriptionCount == 0)
        #expect(await producer.value)
    }

    /// A publisher that completes is not cancelled (Combine: no cancel after completion).
    @Test func firstValue_whenUpstreamCompletesEmpty_isNil_andDoesNotCancel() async throws {
        let publisher = DemandRecordingPublisher<Int, Never>()
        let waiting = Task { try await publisher.firstValue }
        await publisher.waitForDemand()
        publisher.send(completion: .finished)
        #expect(try await waiting.value == nil)
        #expect(publisher.cancellationCount == 0)
        #expect(publisher.activeSubscriptionCount == 0)
    }

    @Test func value_whenUpstreamFails_throwsItsFailure_andDoesNotCancel() async {
        let publisher = DemandRecordingPublisher<Int, Boom>()
        let waiting = Task { try await publisher.value }
        await publisher.waitForDemand()
        publisher.send(completion: .failure(Boom()))
        await #expect(throws: Boom.self) { try await waiting.value }
        #expect(publisher.cancellationCount == 0)
    }

    /// Completion racing the task's cancellation: either outcome is legal (nil, or
    /// `CancellationError`), but never a hang, never a second cancel, and the subscription is
    /// released either way.
    @Test func completionRacingCancel_endsOnce_cancelsAtMostOnce_stress() async {
        for _ in 0..<300 {
            let publisher = DemandRecordingPublisher<Int, Never>()
            let task = Task { try await publisher.firstValue }
            await publisher.waitForDemand()
            let completer = Task.detached { publisher.send(completion: .finished) }
            task.cancel()
            switch await task.result {
            case .success(let value): #expect(value == nil)
            case .failure(let error): #expect(error is CancellationError)
            }
            await completer.value
            // The completion and the teardown's cancel may cross in flight (the publisher then
            // records `cancelledAgain`, harmless in Combine), but `cancel()` is called at most once.
            #expect(publisher.events.filter { $0 == .cancelled || $0 == .cancelledAgain }.count <= 1)
            #expect(publisher.activeSubscriptionCount == 0)
        }
    }

    /// A publisher that sends more than the one element requested: the first value wins; the
    /// rest is discarded (reported as excess if it arrives before the subscription is cancelled,
    /// ignored after), and nothing else is reported.
    @Test func firstValue_ofAPublisherSendingMoreThanRequested_returnsTheFirst_andDiscardsTheRest() async throws {
        let publisher = DemandRecordingPublisher<Int, Never>()
        let log = DiagnosticLog()
        let value = try await Diagnostics.withHandler(log.handler) {
            let waiting = Task { try await publisher.firstValue }
            await publisher.waitForDemand()
            publisher.sendIgnoringDemand(1)
            publisher.sendIgnoringDemand(2)  // nobody asked for it
            return try await waiting.value
        }
        #expect(value == 1)
        #expect(publisher.cancellationCount == 1)
        #expect(log.kinds.allSatisfy { $0 == .excessEmission })
    }

    @Test func worksWithASubject() async throws {
        let subject = CurrentValueSubject<String, Never>("ready")
        #expect(try await subject.firstValue == "ready")
    }
}

#endif
