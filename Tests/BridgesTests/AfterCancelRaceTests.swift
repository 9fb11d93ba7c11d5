import Dispatch
import TestSupport
import Testing

// `cancel()` is final: once it has returned, no handler call starts. These tests record ORDER,
// not counts: a shared clock (a counter under a lock) stamps the moment each handler call
// starts and the moment `cancel()` returned, and any handler start stamped after that return
// fails the test. Real threads race each pair 10 000 times.
@testable import Bridges

@Suite("cancel() is final: no handler call starts after it returned", .timeLimit(.minutes(5)))
struct AfterCancelRaceTests {
    static let iterations = 10_000

    // MARK: - subscribe

    /// The loop delivers elements as fast as it can on a pool thread while a second thread
    /// cancels (started right after `subscribe` returned, so it lands anywhere: before the first
    /// element, or between any two). No `onElement` may start after `cancel()` returned.
    @Test func subscribe_cancelFromAnotherThread_noElementStartsAfterCancelReturned_10_000_iterations() async {
        let log = OrderLog<Int>(iterations: Self.iterations)
        for index in 0..<Self.iterations {
            let loopEnded = Gate()
            let cancelled = Gate()
            let token = EndlessCounter(released: loopEnded).subscribe(
                onElement: { element in
                    log.handlerStarted(index, element)
                    _ = raceJitter(index % 3)
                }, onFinish: { _ in Issue.record("onFinish after cancel (iteration \(index))") })
            DispatchQueue.global().async {
                token.cancel()
                log.cancelReturned(index)
                cancelled.open()
            }
            await cancelled.wait()
            await loopEnded.wait()
        }
        #expect(log.everyCancelReturned)
        let late = log.startsAfterCancel()
        #expect(
            late.count == 0, "\(late.count) onElement calls started after cancel() returned, e.g. \(late.prefix(5))")
    }

    /// Cancelling from inside `onElement` does not deadlock, and no further element is delivered.
    @Test func subscribe_cancelFromInsideOnElement_returns_andNothingMoreIsDelivered() async {
        let loopEnded = Gate()
        let log = OrderLog<Int>(iterations: 1)
        let tokenBox = Collected<Cancellation>()
        let cancelledOnce = Gate()
        let token = EndlessCounter(released: loopEnded).subscribe(onElement: { element in
            log.handlerStarted(0, element)
            // Cancel once, as soon as the token is there (subscribe may not have returned yet).
            if element >= 3, !cancelledOnce.isOpen, let token = tokenBox.values.first {
                cancelledOnce.open()
                token.cancel()  // must not deadlock on the call it is made from
                log.cancelReturned(0)
            }
        })
        tokenBox.append(token)
        await loopEnded.wait()
        #expect(cancelledOnce.isOpen)
        #expect(
            log.startsAfterCancel().isEmpty,
            "elements after the cancel made inside onElement: \(log.starts(0).suffix(3))")
        #expect(token.isCancelled)
    }

    // MARK: - withCompletion

    /// `.doNotCall`: the work finishes on a pool thread while another thread cancels. Once
    /// `cancel()` has returned the handler must not start, not even with `.success`.
    @Test func withCompletion_doNotCall_noCallStartsAfterCancelReturned_10_000_iterations() async {
        let log = OrderLog<CompletionOutcome>(iterations: Self.iterations)
        let workEnded = Collected<Int>()
        let cancelsDone = Collected<Int>()
        for index in 0..<Self.iterations {
            let tokenReady = Collected<Cancellation>()
            let token = withCompletion(
                whenCancelled: .doNotCall,
                { result in
                    log.handlerStarted(index, CompletionOutcome(result))
                    _ = raceJitter(index % 7)
                }
            ) {
                defer { workEnded.append(index) }
                await tokenReady.wait(count: 1)
                let token = tokenReady.values[0]
                DispatchQueue.global().async {
                    token.cancel()
                    log.cancelReturned(index)
                    cancelsDone.append(index)
                }
                return index + raceJitter(index % 50) * 0
            }
            tokenReady.append(token)
        }
        await workEnded.wait(count: Self.iterations)
        await cancelsDone.wait(count: Self.iterations)
        #expect(log.everyCancelReturned)
        let late = log.startsAfterCancel()
        #expect(
            late.count == 0, "\(late.count) completion calls started after cancel() returned, e.g. \(late.prefix(5))")
    }

    /// Default (`.callWithCancellationError`): after `cancel()` returned the handler may only be
    /// called with `CancellationError` (on a queue or the main actor that call is enqueued), never
    /// with the work's value; and every iteration ends with exactly one call.
    @Test func withCompletion_onQueue_onlyCancellationErrorAfterCancelReturned_10_000_iterations() async {
        let log = OrderLog<CompletionOutcome>(iterations: Self.iterations)
        let calls = Collected<Int>()
        let cancelsDone = Collected<Int>()
        let queue = DispatchQueue(label: "AfterCancelRaceTests.delivery")
        for index in 0..<Self.iterations {
            let tokenReady = Collected<Cancellation>()
            let token = withCompletion(
                on: .queue(queue),
                { result in
                    log.handlerStarted(index, CompletionOutcome(result))
                    calls.append(index)
                }
            ) {
                await tokenReady.wait(count: 1)
                let token = tokenReady.values[0]
                DispatchQueue.global().async {
                    token.cancel()
                    log.cancelReturned(index)
                    cancelsDone.append(index)
                }
                return index + raceJitter(index % 50) * 0
            }
            tokenReady.append(token)
        }
        await cancelsDone.wait(count: Self.iterations)
        await calls.wait(count: Self.iterations)
        // One more round trip through the serial queue: any second call would have run by now.
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        #expect(calls.count == Self.iterations)
        let late = log.startsAfterCancel(allowing: { $0 == .cancelled })
        #expect(
            late.count == 0, "\(late.count) calls with a value started after cancel() returned, e.g. \(late.prefix(5))")
    }
}
