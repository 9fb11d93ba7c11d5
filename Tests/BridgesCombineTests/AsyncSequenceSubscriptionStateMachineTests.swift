#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif
import Testing
import Bridges
@testable import BridgesCombine

#if canImport(Combine) || OpenCombine

/// The pure demand bookkeeping behind `sequence.publisher()`, event by event.
@Suite struct AsyncSequenceSubscriptionStateMachineTests {
    typealias Machine = AsyncSequenceSubscriptionStateMachine<String>

    // MARK: - Subscription

    @Test func didSubscribe_whenDemandArrivedWhileSubscribing_startsTheTask() {
        var machine = Machine(subscriber: "s")
        guard case .none = machine.request(.max(2)) else { Issue.record("no task before didSubscribe"); return }
        guard case .startTask = machine.didSubscribe() else { Issue.record("expected startTask"); return }
        let task = Task<Void, Never> {}
        guard case .none = machine.taskStarted(task) else { Issue.record("expected none"); return }
        guard case .proceed = machine.takeDemand() else { Issue.record("expected proceed"); return }
        guard case .proceed = machine.takeDemand() else { Issue.record("expected proceed"); return }
        guard case .wait = machine.takeDemand() else { Issue.record("expected wait at zero demand"); return }
    }

    @Test func didSubscribe_withoutDemand_startsNothing() {
        var machine = Machine(subscriber: "s")
        guard case .none = machine.didSubscribe() else { Issue.record("expected none"); return }
        guard case .startTask = machine.request(.max(1)) else { Issue.record("first demand starts the task"); return }
    }

    // MARK: - Request

    @Test func request_whenNone_isInvalid() {
        var machine = Machine(subscriber: "s")
        _ = machine.didSubscribe()
        guard case .reportInvalidDemand = machine.request(.none) else { Issue.record("expected report"); return }
        guard case .startTask = machine.request(.max(1)) else { Issue.record("state unchanged by .none"); return }
    }

    @Test func request_whenTaskWaits_resumesItAndTakesOneUnit() async {
        var machine = Machine(subscriber: "s")
        _ = machine.didSubscribe()
        _ = machine.request(.max(1))
        _ = machine.taskStarted(Task {})
        _ = machine.takeDemand()  // the one unit
        let proceeded = await withUnsafeContinuation { waiter in
            guard case .none = machine.awaitDemand(waiter) else {
                Issue.record("expected the waiter stored"); waiter.resume(returning: false); return
            }
            guard case .resume(let stored) = machine.request(.max(2)) else {
                Issue.record("expected resume"); waiter.resume(returning: false); return
            }
            stored.resume(returning: true)
        }
        #expect(proceeded)
        guard case .proceed = machine.takeDemand() else { Issue.record("one unit left of 2"); return }
        guard case .wait = machine.takeDemand() else { Issue.record("the woken task took the other"); return }
    }

    @Test func request_whenUnlimited_neverRunsOut() {
        var machine = Machine(subscriber: "s")
        _ = machine.didSubscribe()
        _ = machine.request(.unlimited)
        _ = machine.taskStarted(Task {})
        for _ in 0..<1_000 {
            guard case .proceed = machine.takeDemand() else { Issue.record("unlimited ran out"); return }
        }
    }

    @Test func received_additionalDemand_isAdded() {
        var machine = Machine(subscriber: "s")
        _ = machine.didSubscribe()
        _ = machine.request(.max(1))
        _ = machine.taskStarted(Task {})
        _ = machine.takeDemand()
        machine.received(additional: .max(1))
        guard case .proceed = machine.takeDemand() else { Issue.record("expected the returned demand"); return }
    }

    // MARK: - Cancel and finish

    @Test func cancel_whenRunningAndWaiting_cancelsTaskWakesWaiterReleasesSubscriber() async {
        var machine = Machine(subscriber: "s")
        _ = machine.didSubscribe()
        _ = machine.request(.max(1))
        let task = Task<Void, Never> {}
        _ = machine.taskStarted(task)
        _ = machine.takeDemand()
        let proceeded = await withUnsafeContinuation { waiter in
            _ = machine.awaitDemand(waiter)
            guard case .cancel(let cancelled, let stored, let released) = machine.cancel() else {
                Issue.record("expected cancel"); waiter.resume(returning: true); return
            }
            #expect(cancelled == task)
            #expect(released == "s")
            stored?.resume(returning: false)
        }
        #expect(!proceeded)
        guard case .none = machine.cancel() else { Issue.record("second cancel must do nothing"); return }
        #expect(machine.finish() == nil)  // no completion after cancel
        #expect(machine.subscriberForEmission() == nil)
        guard case .stop = machine.takeDemand() else { Issue.record("expected stop"); return }
    }

    @Test func taskStarted_afterCancel_cancelsTheTask() {
        var machine = Machine(subscriber: "s")
        _ = machine.didSubscribe()
        _ = machine.request(.max(1))
        _ = machine.cancel()
        let task = Task<Void, Never> {}
        guard case .cancel(let cancelled) = machine.taskStarted(task) else { Issue.record("expected cancel"); return }
        #expect(cancelled == task)
    }

    @Test func finish_returnsTheSubscriberOnce() {
        var machine = Machine(subscriber: "s")
        _ = machine.didSubscribe()
        _ = machine.request(.max(1))
        _ = machine.taskStarted(Task {})
        #expect(machine.finish() == "s")
        #expect(machine.finish() == nil)
        guard case .none = machine.cancel() else { Issue.record("cancel after finish does nothing"); return }
    }
}

#endif
