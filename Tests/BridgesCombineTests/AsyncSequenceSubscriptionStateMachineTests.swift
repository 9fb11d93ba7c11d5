import Bridges
import Testing

@testable import BridgesCombine

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine

/// The pure demand bookkeeping behind `sequence.publisher()`, event by event.
@Suite(.timeLimit(.minutes(3))) struct AsyncSequenceSubscriptionStateMachineTests {
    typealias Machine = AsyncSequenceSubscriptionStateMachine<String>

    // MARK: - Subscription

    @Test func didSubscribe_whenDemandArrivedWhileSubscribing_startsTheTask() {
        var machine = Machine(subscriber: "s")
        guard case .none = machine.request(.max(2)) else {
            Issue.record("no task before didSubscribe")
            return
        }
        guard case .startTask = machine.didSubscribe() else {
            Issue.record("expected startTask")
            return
        }
        guard case .proceed = machine.takeDemand() else {
            Issue.record("expected proceed")
            return
        }
        guard case .proceed = machine.takeDemand() else {
            Issue.record("expected proceed")
            return
        }
        guard case .wait = machine.takeDemand() else {
            Issue.record("expected wait at zero demand")
            return
        }
    }

    /// The task starts without demand (it fetches one element ahead, so that an empty sequence
    /// completes at once), but it may not emit: it waits for demand.
    @Test func didSubscribe_withoutDemand_startsTheTask_whichWaitsForDemandToEmit() {
        var machine = Machine(subscriber: "s")
        guard case .startTask = machine.didSubscribe() else {
            Issue.record("expected startTask")
            return
        }
        guard case .wait = machine.takeDemand() else {
            Issue.record("expected wait at zero demand")
            return
        }
        guard case .none = machine.request(.max(1)) else {
            Issue.record("no waiter stored yet: demand is kept")
            return
        }
        guard case .proceed = machine.takeDemand() else {
            Issue.record("expected proceed")
            return
        }
    }

    // MARK: - Request

    @Test func request_whenNone_isInvalid() {
        var machine = Machine(subscriber: "s")
        _ = machine.didSubscribe()
        guard case .reportInvalidDemand = machine.request(.none) else {
            Issue.record("expected report")
            return
        }
        guard case .wait = machine.takeDemand() else {
            Issue.record("state unchanged by .none")
            return
        }
    }

    @Test func request_whenTaskWaits_resumesItAndTakesOneUnit() async {
        var machine = Machine(subscriber: "s")
        _ = machine.didSubscribe()
        _ = machine.request(.max(1))
        _ = machine.takeDemand()  // the one unit
        let proceeded = await withUnsafeContinuation { waiter in
            guard case .none = machine.awaitDemand(waiter) else {
                Issue.record("expected the waiter stored")
                waiter.resume(returning: false)
                return
            }
            guard case .resume(let stored) = machine.request(.max(2)) else {
                Issue.record("expected resume")
                waiter.resume(returning: false)
                return
            }
            stored.resume(returning: true)
        }
        #expect(proceeded)
        guard case .proceed = machine.takeDemand() else {
            Issue.record("one unit left of 2")
            return
        }
        guard case .wait = machine.takeDemand() else {
            Issue.record("the woken task took the other")
            return
        }
    }

    @Test func request_whenUnlimited_neverRunsOut() {
        var machine = Machine(subscriber: "s")
        _ = machine.didSubscribe()
        _ = machine.request(.unlimited)
        for _ in 0..<1_000 {
            guard case .proceed = machine.takeDemand() else {
                Issue.record("unlimited ran out")
                return
            }
        }
    }

    @Test func received_additionalDemand_isAdded() {
        var machine = Machine(subscriber: "s")
        _ = machine.didSubscribe()
        _ = machine.request(.max(1))
        _ = machine.takeDemand()
        machine.received(additional: .max(1))
        guard case .proceed = machine.takeDemand() else {
            Issue.record("expected the returned demand")
            return
        }
    }

    // MARK: - Cancel and finish

    @Test func cancel_whenRunningAndWaiting_wakesWaiterReleasesSubscriber() async {
        var machine = Machine(subscriber: "s")
        _ = machine.didSubscribe()
        _ = machine.request(.max(1))
        _ = machine.takeDemand()
        let proceeded = await withUnsafeContinuation { waiter in
            _ = machine.awaitDemand(waiter)
            guard case .cancel(let stored, let released) = machine.cancel() else {
                Issue.record("expected cancel")
                waiter.resume(returning: true)
                return
            }
            #expect(released == "s")
            stored?.resume(returning: false)
        }
        #expect(!proceeded)
        guard case .none = machine.cancel() else {
            Issue.record("second cancel must do nothing")
            return
        }
        #expect(machine.finish() == nil)  // no completion after cancel
        #expect(machine.subscriberForEmission() == nil)
        guard case .stop = machine.takeDemand() else {
            Issue.record("expected stop")
            return
        }
    }

    @Test func finish_returnsTheSubscriberOnce() {
        var machine = Machine(subscriber: "s")
        _ = machine.didSubscribe()
        _ = machine.request(.max(1))
        #expect(machine.finish() == "s")
        #expect(machine.finish() == nil)
        guard case .none = machine.cancel() else {
            Issue.record("cancel after finish does nothing")
            return
        }
    }
}

#endif
