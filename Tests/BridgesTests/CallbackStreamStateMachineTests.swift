@testable import Bridges
import Testing

/// The pure state machine, event by event (no locks, no tasks except where a continuation is needed).
@Suite("CallbackStream: state machine")
struct CallbackStreamStateMachineTests {
    typealias Machine = CallbackStreamStateMachine<Int, TestError, String>

    func started(_ policy: BufferingPolicy = .unbounded) -> Machine {
        var machine = Machine(policy: policy, builder: "build")
        guard case .runBuilder("build") = machine.next() else {
            Issue.record("the first next() must run the builder")
            return machine
        }
        return machine
    }

    // MARK: - Next

    @Test func next_whenIdle_runsBuilderOnce() {
        var machine = Machine(policy: .unbounded, builder: "build")
        guard case .runBuilder = machine.next() else { Issue.record(Comment(rawValue: "expected runBuilder")); return }
        guard case .suspend = machine.next() else { Issue.record(Comment(rawValue: "expected suspend")); return }
    }

    @Test func next_whenBuffered_returnsElementWithoutSuspending() {
        var machine = started()
        _ = machine.yield(1)
        guard case .element(1, nil, nil) = machine.next() else { Issue.record(Comment(rawValue: "expected element 1")); return }
    }

    @Test func next_whenFinishedWithBuffer_drainsThenThrows() {
        var machine = started()
        _ = machine.yield(1)
        _ = machine.finish(TestError(code: 3))  // while the builder runs: its teardown runs when returned
        _ = machine.builderReturned(.init(Cancellation()))
        _ = machine.teardownReturned()
        guard case .element(1, _, _) = machine.next() else { Issue.record(Comment(rawValue: "expected 1")); return }
        guard case .end(TestError(code: 3)?) = machine.next() else { Issue.record(Comment(rawValue: "expected the failure")); return }
        guard case .end(nil) = machine.next() else { Issue.record(Comment(rawValue: "then nil forever")); return }
    }

    // MARK: - Teardown slot

    @Test func finish_whileBuilding_runsTeardownWhenReturned() {
        var machine = started()
        guard case .finish(nil, nil, let senders, nil, nil) = machine.finish(nil), senders.isEmpty else { Issue.record(Comment(rawValue: "no teardown yet")); return }
        let teardown = Cancellation()
        guard let (returned, termination) = machine.builderReturned(.init(teardown)),
              case .cancellation(let cancellation) = returned.kind, case .finished = termination
        else { Issue.record("run it now, as finished"); return }
        #expect(cancellation === teardown)
        #expect(machine.teardownReturned() == nil)
    }

    @Test func finish_withBufferedElements_endsOnlyAfterTheTeardownReturned() {
        var machine = started()
        #expect(machine.builderReturned(.init(Cancellation())) == nil)
        _ = machine.yield(1)
        guard case .finish(nil, nil, _, let teardown?, nil) = machine.finish(nil), case .finished = teardown.1 else {
            Issue.record("the finisher takes the teardown"); return
        }
        guard case .element(1, nil, nil) = machine.next() else { Issue.record("buffered element first"); return }
        guard case .suspend = machine.next() else { Issue.record("the end waits for the teardown to return"); return }
        #expect(machine.teardownReturned() == nil, "nobody waiting yet")
        guard case .end(nil) = machine.next() else { Issue.record("then the end"); return }
    }

    @Test func cancelSender_keepsItsPlaceInLine() {
        var machine = started(.rendezvous)
        guard case .mustWait(1, let first) = machine.trySend(1), case .mustWait(2, let second) = machine.trySend(2) else {
            Issue.record("both senders must wait"); return
        }
        machine.senders.append(.init(id: first, element: 1, continuation: nil))
        machine.senders.append(.init(id: second, element: 2, continuation: nil))
        _ = machine.cancelSender(id: second)
        guard case .element(1, nil, nil) = machine.next(), case .element(2, nil, nil) = machine.next() else {
            Issue.record("the earlier send is delivered first, whatever the cancellation order"); return
        }
    }

    @Test func consumerTerminated_afterBuilderReturned_takesTeardownOnce() {
        var machine = started()
        let teardown = Cancellation()
        #expect(machine.builderReturned(.init(teardown)) == nil)
        guard case .terminate(nil, nil, let senders, let taken?, nil, nil) = machine.consumerTerminated(), senders.isEmpty,
              case .cancellation(let cancellation) = taken.0.kind, case .cancelled = taken.1
        else {
            Issue.record(Comment(rawValue: "expected the teardown, as cancelled")); return
        }
        #expect(cancellation === teardown)
        guard case .none = machine.consumerTerminated() else { Issue.record(Comment(rawValue: "second termination does nothing")); return }
        guard case .none = machine.finish(nil) else { Issue.record(Comment(rawValue: "finish after the consumer left is not misuse")); return }
    }

    @Test func consumerTerminated_whenIdle_releasesBuilderWithoutTeardown() {
        var machine = Machine(policy: .unbounded, builder: "build")
        guard case .terminate("build", nil, let senders, nil, nil, nil) = machine.consumerTerminated(), senders.isEmpty else {
            Issue.record(Comment(rawValue: "expected the builder back, no teardown")); return
        }
    }

    // MARK: - Yield

    /// Every yield after finish is the producer's misuse; the diagnostics ledger reports the first
    /// per stream and counts the rest (DiagnosticsLedgerTests).
    @Test func yield_whenFinishedByProducer_reportsEveryOccurrence() {
        var machine = started()
        _ = machine.finish(nil)
        guard case .terminated(1, true) = machine.yield(1) else { Issue.record(Comment(rawValue: "report the first")); return }
        guard case .terminated(2, true) = machine.yield(2) else { Issue.record(Comment(rawValue: "and count the second")); return }
    }

    @Test func yield_whenConsumerSuspended_resumesConsumer() async throws {
        let delivered: Int? = try await withUnsafeContinuation { continuation in
            var machine = started(.rendezvous)
            guard case .suspended = machine.suspend(continuation) else { Issue.record(Comment(rawValue: "expected suspension")); return }
            guard case .resumeConsumer(let consumer, 7, nil, .stopProducing) = machine.yield(7) else {
                Issue.record(Comment(rawValue: "expected a handover that tells the producer to stop")); return
            }
            consumer.resume(returning: .init(.success(7)))
        }.result.get()
        #expect(delivered == 7)
    }

    // MARK: - Demand

    @Test func registerDemand_perPolicy() {
        var suspending = started(.suspending(3))
        _ = suspending.yield(1)
        #expect(suspending.registerDemand { _ in }.initial == 2)
        var rendezvous = started(.rendezvous)
        #expect(rendezvous.registerDemand { _ in }.initial == nil)
        var latest = started(.latest)
        #expect(latest.registerDemand { _ in }.initial == Int.max)
    }
}
