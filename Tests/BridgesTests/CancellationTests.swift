import Bridges
import Dispatch
import TestSupport
import Testing

@Suite("Cancellation and CancellationBag", .timeLimit(.minutes(3)))
struct CancellationTests {
    @Test func cancel_runsTheActionOnce_whateverTheNumberOfCallsAndThreads() {
        let runs = Collected<Void>()
        let token = Cancellation { runs.append(()) }
        #expect(!token.isCancelled)
        DispatchQueue.concurrentPerform(iterations: 1_000) { _ in token.cancel() }
        #expect(runs.count == 1)
        #expect(token.isCancelled)
    }

    @Test func emptyToken_recordsCancellation() {
        let token = Cancellation()
        token.cancel()
        #expect(token.isCancelled)
    }

    @Test func combined_cancelsEveryPart() {
        let a = Cancellation()
        let b = Cancellation()
        Cancellation(combining: [a, b]).cancel()
        #expect(a.isCancelled && b.isCancelled)
    }

    @Test func taskToken_cancelsTheTask() async {
        let cancelled = Signal()
        let task = Task {
            await withTaskCancellationHandler {
                await cancelled.wait()
            } onCancel: {
                cancelled.open()
            }
        }
        task.cancellation.cancel()
        await task.value  // returns only because the cancellation reached the task
        #expect(task.isCancelled)
    }

    @Test func action_isReleasedAfterCancel() {
        let released = Weak<Canary>()
        let token: Cancellation
        do {
            let canary = Canary()
            released.object = canary
            token = Cancellation { _ = canary }
        }
        #expect(released.object != nil)
        token.cancel()
        #expect(released.object == nil)
    }

    @Test func bag_cancelsEverythingWhenDeallocated() {
        let a = Cancellation()
        let b = Cancellation()
        do {
            let bag = CancellationBag()
            a.store(in: bag)
            b.store(in: bag)
            #expect(bag.count == 2)
        }
        #expect(a.isCancelled && b.isCancelled)
    }

    @Test func bag_cancelAll_cancelsAndEmpties_andStaysUsable() {
        let bag = CancellationBag()
        let a = Cancellation()
        a.store(in: bag)
        bag.cancelAll()
        #expect(a.isCancelled && bag.isEmpty)
        let b = Cancellation()
        b.store(in: bag)
        #expect(bag.count == 1 && !b.isCancelled)
    }

    @Test func bag_doesNotKeepTokensThatWereCancelledElsewhere() {
        let bag = CancellationBag()
        let weakAction = Weak<Canary>()
        for index in 0..<100 {
            let canary = Canary()
            if index == 0 { weakAction.object = canary }
            let token = Cancellation { _ = canary }
            token.store(in: bag)
            token.cancel()
        }
        #expect(bag.count == 0)
        #expect(weakAction.object == nil, "a cancelled token drops its action")
    }

    @Test func set_storeInterplay() {
        var set = Set<Cancellation>()
        let token = Cancellation()
        token.store(in: &set)
        token.store(in: &set)
        #expect(set.count == 1)
    }
}
