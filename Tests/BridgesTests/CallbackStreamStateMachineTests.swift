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
        _ = machine.finish(TestError(code: 3))
        guard case .element(1, _, _) = machine.next() else { Issue.record(Comment(rawValue: "expected 1")); return }
        guard case .end(TestError(code: 3)?) = machine.next() else { Issue.record(Comment(rawValue: "expected the failure")); return }
        guard case .end(nil) = machine.next() else { Issue.record(Comment(rawValue: "then nil forever")); return }
    }

    // MARK: - Teardown slot

    @Test func finish_whileBuilding_runsTeardownWhenReturned() {
        var machine = started()
        guard case .finish(nil, nil, let senders, nil, nil) = machine.finish(nil), senders.isEmpty else { Issue.record(Comment(rawValue: "no teardown yet")); return }
        let teardown = Cancellation()
        #expect(machine.builderReturned(teardown) === teardown, "run it now")
    }

    @Test func consumerTerminated_afterBuilderReturned_takesTeardownOnce() {
        var machine = started()
        let teardown = Cancellation()
        #expect(machine.builderReturned(teardown) == nil)
        guard case .terminate(nil, nil, let senders, let taken?, nil, nil) = machine.consumerTerminated(), senders.isEmpty else {
            Issue.record(Comment(rawValue: "expected the teardown")); return
        }
        #expect(taken === teardown)
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
        guard case .terminated(true) = machine.yield(1) else { Issue.record(Comment(rawValue: "report the first")); return }
        guard case .terminated(true) = machine.yield(2) else { Issue.record(Comment(rawValue: "and count the second")); return }
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
