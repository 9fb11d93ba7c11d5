import TestSupport
import Testing

@testable import Bridges

/// The pure state machine, event by event (no locks, no tasks except where a continuation is needed).
@Suite("CallbackStream: state machine", .timeLimit(.minutes(3)))
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
        guard case .runBuilder = machine.next() else {
            Issue.record(Comment(rawValue: "expected runBuilder"))
            return
        }
        guard case .suspend = machine.next() else {
            Issue.record(Comment(rawValue: "expected suspend"))
            return
        }
    }

    @Test func next_whenBuffered_returnsElementWithoutSuspending() {
        var machine = started()
        _ = machine.yield(1)
        guard case .element(1, nil, nil) = machine.next() else {
            Issue.record(Comment(rawValue: "expected element 1"))
            return
        }
    }

    @Test func next_whenFinishedWithBuffer_drainsThenThrows() {
        var machine = started()
        _ = machine.yield(1)
        _ = machine.finish(TestError(code: 3))  // while the builder runs: its teardown runs when returned
        _ = machine.builderReturned(.init(Cancellation()))
        _ = machine.teardownReturned()
        guard case .element(1, _, _) = machine.next() else {
            Issue.record(Comment(rawValue: "expected 1"))
            return
        }
        guard case .end(TestError(code: 3)?) = machine.next() else {
            Issue.record(Comment(rawValue: "expected the failure"))
            return
        }
        guard case .end(nil) = machine.next() else {
            Issue.record(Comment(rawValue: "then nil forever"))
            return
        }
    }

    // MARK: - Fast paths (inlined into the consumer's and the producer's loops)

    /// `takeBuffered()` answers only when `next()` would return a buffered element with no
    /// sender to resume and no demand to report; everything else must go through `next()`.
    @Test func takeBuffered_answersOnlyWhatNextWouldAnswerAlone() {
        var idle = Machine(policy: .unbounded, builder: "build")
        #expect(idle.takeBuffered() == nil)
        guard case .runBuilder = idle.next() else {
            Issue.record("the builder must still run")
            return
        }

        var unbounded = started()
        _ = unbounded.yield(1)
        _ = unbounded.yield(2)
        #expect(unbounded.takeBuffered() == 1)
        #expect(unbounded.takeBuffered() == 2)
        #expect(unbounded.takeBuffered() == nil)

        // A waiting sender: the take makes room for it, so only next() may take.
        var withSender = started(.suspending(1))
        _ = withSender.yield(1)
        withSender.senders.append(.init(id: 1, element: 2, continuation: nil))
        #expect(withSender.takeBuffered() == nil)
        guard case .element(1, nil, nil) = withSender.next(), withSender.senders.isEmpty, withSender.buffer.count == 1
        else {
            Issue.record("next() takes 1 and moves the sender's 2 into the buffer")
            return
        }

        // Demand to report after a take (.suspending(n), n > 0): only next() reports it.
        var suspending = started(.suspending(2))
        _ = suspending.registerDemand { _ in }
        _ = suspending.yield(1)
        _ = suspending.yield(2)
        #expect(suspending.takeBuffered() == nil)
        guard case .element(1, nil, let demand?) = suspending.next(), demand.count == 1 else {
            Issue.record("next() takes 1 and reports one unit of demand")
            return
        }

        // Finished with elements left: drained by the fast path, the end only by next().
        var finished = started()
        _ = finished.builderReturned(.init(Cancellation()))
        _ = finished.yield(1)
        _ = finished.finish(nil)
        #expect(finished.takeBuffered() == 1)
        #expect(finished.takeBuffered() == nil)

        // Terminated: nothing is ever taken.
        var terminated = started()
        _ = terminated.yield(1)
        _ = terminated.consumerTerminated(cancelled: false)
        #expect(terminated.takeBuffered() == nil)
    }

    /// `yieldOnlyBuffers` is true only where `yield` would append and answer `.enqueued`
    /// without anything else to do.
    @Test func yieldOnlyBuffers_onlyForUnboundedStreamingWithNoConsumerWaiting() async throws {
        #expect(!Machine(policy: .unbounded, builder: "build").yieldOnlyBuffers)
        #expect(started().yieldOnlyBuffers)
        for policy in [BufferingPolicy.latest, .drop, .dropOldest(4), .dropNewest(4), .suspending(4), .rendezvous] {
            #expect(!started(policy).yieldOnlyBuffers, "\(policy) decides more than an append")
        }
        var finished = started()
        _ = finished.finish(nil)
        #expect(!finished.yieldOnlyBuffers)
        var terminated = started()
        _ = terminated.consumerTerminated(cancelled: false)
        #expect(!terminated.yieldOnlyBuffers)

        // A consumer waiting: the element is handed over, not buffered.
        let delivered: Int? = try await withUnsafeContinuation { continuation in
            var machine = started()
            guard case .suspended = machine.suspend(continuation) else {
                Issue.record("expected suspension")
                return
            }
            #expect(!machine.yieldOnlyBuffers)
            guard case .resumeConsumer(let consumer, 5, nil, .enqueued) = machine.yield(5) else {
                Issue.record("expected a handover")
                return
            }
            consumer.resume(returning: .init(.success(5)))
        }.result.get()
        #expect(delivered == 5)
    }

    // MARK: - Teardown slot

    @Test func finish_whileBuilding_runsTeardownWhenReturned() {
        var machine = started()
        guard case .finish(let senders, nil, nil) = machine.finish(nil), senders.isEmpty else {
            Issue.record(Comment(rawValue: "no teardown yet"))
            return
        }
        let teardown = Cancellation()
        guard case .runHere(let returned, let termination)? = machine.builderReturned(.init(teardown)),
            case .cancellation(let cancellation) = returned.kind, case .finished = termination
        else {
            Issue.record("run it now, as finished")
            return
        }
        #expect(cancellation === teardown)
        #expect(machine.teardownReturned() == nil)
    }

    @Test func finish_withBufferedElements_endsOnlyAfterTheTeardownReturned() {
        var machine = started()
        #expect(machine.builderReturned(.init(Cancellation())) == nil)
        _ = machine.yield(1)
        guard case .finish(_, .runHere(_, .finished)?, nil) = machine.finish(nil) else {
            Issue.record("the finisher takes the teardown")
            return
        }
        guard case .element(1, nil, nil) = machine.next() else {
            Issue.record("buffered element first")
            return
        }
        guard case .suspend = machine.next() else {
            Issue.record("the end waits for the teardown to return")
            return
        }
        #expect(machine.teardownReturned() == nil, "nobody waiting yet")
        guard case .end(nil) = machine.next() else {
            Issue.record("then the end")
            return
        }
    }

    @Test func cancelSender_keepsItsPlaceInLine() {
        var machine = started(.rendezvous)
        guard case .mustWait(1, let first) = machine.trySend(1), case .mustWait(2, let second) = machine.trySend(2)
        else {
            Issue.record("both senders must wait")
            return
        }
        machine.senders.append(.init(id: first, element: 1, continuation: nil))
        machine.senders.append(.init(id: second, element: 2, continuation: nil))
        _ = machine.cancelSender(id: second)
        guard case .element(1, nil, nil) = machine.next(), case .element(2, nil, nil) = machine.next() else {
            Issue.record("the earlier send is delivered first, whatever the cancellation order")
            return
        }
    }

    @Test func consumerTerminated_afterBuilderReturned_takesTeardownOnce() {
        var machine = started()
        let teardown = Cancellation()
        #expect(machine.builderReturned(.init(teardown)) == nil)
        guard
            case .terminate(nil, nil, let senders, .runHere(let taken, .cancelled)?, nil, nil) =
                machine.consumerTerminated(cancelled: false),
            senders.isEmpty,
            case .cancellation(let cancellation) = taken.kind
        else {
            Issue.record(Comment(rawValue: "expected the teardown, as cancelled"))
            return
        }
        #expect(cancellation === teardown)
        guard case .none = machine.consumerTerminated(cancelled: false) else {
            Issue.record(Comment(rawValue: "second termination does nothing"))
            return
        }
        guard case .none = machine.finish(nil) else {
            Issue.record(Comment(rawValue: "finish after the consumer left is not misuse"))
            return
        }
    }

    // MARK: - Cancellation

    /// Cancelled while streaming: the next `next()` says `.cancelled` once, then `.end(nil)`.
    @Test func next_whenCancelledWhileStreaming_isCancelledOnce_thenTheEnd() {
        var machine = started()
        _ = machine.builderReturned(.init(Cancellation()))
        _ = machine.yield(1)
        _ = machine.consumerTerminated(cancelled: true)  // takes the teardown to run
        guard case .suspend = machine.next() else {
            Issue.record("the end waits for the teardown")
            return
        }
        _ = machine.teardownReturned()
        guard case .cancelled = machine.next() else {
            Issue.record("expected .cancelled")
            return
        }
        guard case .end(nil) = machine.next() else {
            Issue.record("expected the end after it")
            return
        }
    }

    /// Cancelled before the builder ran: the same.
    @Test func next_whenCancelledWhileIdle_isCancelled() {
        var machine = Machine(policy: .unbounded, builder: "build")
        _ = machine.consumerTerminated(cancelled: true)
        guard case .cancelled = machine.next() else {
            Issue.record("expected .cancelled")
            return
        }
    }

    /// A released iterator is not a cancellation.
    @Test func next_whenTheIteratorWasReleased_isTheEnd() {
        var machine = started()
        _ = machine.consumerTerminated(cancelled: false)
        guard case .end(nil) = machine.next() else {
            Issue.record("expected the end")
            return
        }
    }

    /// Finished with elements still buffered: the cancellation cuts them off, so it is reported;
    /// finished with nothing left, the stream had ended first: the end.
    @Test func next_whenCancelledAfterTheProducerFinished_isCancelledOnlyIfSomethingWasCutOff() {
        var cutOff = started()
        _ = cutOff.builderReturned(.init(Cancellation()))
        _ = cutOff.yield(1)
        _ = cutOff.finish(nil)
        _ = cutOff.consumerTerminated(cancelled: true)
        _ = cutOff.teardownReturned()
        guard case .cancelled = cutOff.next() else {
            Issue.record("expected .cancelled: 1 was discarded")
            return
        }

        var drained = started()
        _ = drained.builderReturned(.init(Cancellation()))
        _ = drained.finish(nil)
        _ = drained.consumerTerminated(cancelled: true)
        _ = drained.teardownReturned()
        guard case .end(nil) = drained.next() else {
            Issue.record("expected the end: nothing was cut off")
            return
        }
    }

    @Test func consumerTerminated_whenIdle_releasesBuilderWithoutTeardown() {
        var machine = Machine(policy: .unbounded, builder: "build")
        guard case .terminate("build", nil, let senders, nil, nil, nil) = machine.consumerTerminated(cancelled: false),
            senders.isEmpty
        else {
            Issue.record(Comment(rawValue: "expected the builder back, no teardown"))
            return
        }
    }

    // MARK: - Yield

    /// Every yield after finish is the producer's misuse; the diagnostics ledger reports the first
    /// per stream and counts the rest (DiagnosticsLedgerTests).
    @Test func yield_whenFinishedByProducer_reportsEveryOccurrence() {
        var machine = started()
        _ = machine.finish(nil)
        guard case .terminated(1, true) = machine.yield(1) else {
            Issue.record(Comment(rawValue: "report the first"))
            return
        }
        guard case .terminated(2, true) = machine.yield(2) else {
            Issue.record(Comment(rawValue: "and count the second"))
            return
        }
    }

    @Test func yield_whenConsumerSuspended_resumesConsumer() async throws {
        let delivered: Int? = try await withUnsafeContinuation { continuation in
            var machine = started(.rendezvous)
            guard case .suspended = machine.suspend(continuation) else {
                Issue.record(Comment(rawValue: "expected suspension"))
                return
            }
            guard case .resumeConsumer(let consumer, 7, nil, .stopProducing) = machine.yield(7) else {
                Issue.record(Comment(rawValue: "expected a handover that tells the producer to stop"))
                return
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
