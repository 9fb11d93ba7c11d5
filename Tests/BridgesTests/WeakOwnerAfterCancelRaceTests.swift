import Dispatch
import TestSupport
import Testing

// `cancel()` is final for weak-owner tasks too, with async handlers: once `cancel()` has returned
// no NEW handler call starts. A sync `cancel()` cannot wait for an async handler to finish (it
// could wait for the very actor or thread the handler needs), so the one call the task had
// already decided to make may still begin, and then it sees its task cancelled. Here as in
// AfterCancelRaceTests, a shared logical clock stamps each handler start and each return from
// `cancel()`; real threads race them 10 000 times per test.
@testable import Bridges

/// The actor the handlers below are isolated to (not the caller's, so every call hops to it).
@globalActor actor HandlerActor {
    static let shared = HandlerActor()
}

/// An owner whose deallocation opens a gate.
final class RaceOwner: Sendable {
    let released: DeinitSignal
    init(released: Gate) { self.released = DeinitSignal(released) }
}

/// One handler start: the element (or 0 for runTask's `apply`), and whether its task was
/// already cancelled when it began.
struct HandlerStart: Sendable, CustomStringConvertible {
    let element: Int
    let sawCancellation: Bool
    var description: String { "start(\(element), sawCancellation: \(sawCancellation))" }
}

@Suite("cancel() is final for weak-owner tasks with async handlers", .timeLimit(.minutes(5)))
struct WeakOwnerAfterCancelRaceTests {
    static let iterations = 10_000

    // MARK: - forEach(weak:)

    /// The loop runs off the handler's actor (the caller is nonisolated) and each element hops to
    /// `@HandlerActor`; `cancel()` is made on that actor, between any two elements. Nothing on
    /// one actor interleaves: no call may start after `cancel()` returned there. (Before the check
    /// ran in the handler's isolation, the loop decided off the actor and the hop let a cancel
    /// queued on the actor run first.)
    @Test func forEachWeak_cancelOnTheHandlersActor_noCallStartsAfterCancelReturned_10_000_iterations() async {
        let log = OrderLog<HandlerStart>(iterations: Self.iterations)
        for index in 0..<Self.iterations {
            let loopEnded = Gate()
            let ownerReleased = Gate()
            let cancelled = Gate()
            var owner: RaceOwner? = RaceOwner(released: ownerReleased)
            let bag = CancellationBag()
            let token = EndlessCounter(released: loopEnded).forEach(weak: owner!, in: bag) { @HandlerActor _, element in
                log.handlerStarted(index, HandlerStart(element: element, sawCancellation: Task.isCancelled))
            }
            cancelOnHandlerActor(token, index, log, then: cancelled)
            await cancelled.wait()
            await loopEnded.wait()
            owner = nil
            await ownerReleased.wait()  // the loop kept no strong reference to its owner
            #expect(token.isCancelled)
            withExtendedLifetime(bag) {}
        }
        #expect(log.everyCancelReturned)
        let late = log.startsAfterCancel()
        #expect(
            late.isEmpty,
            "\(late.count) handler calls started on the actor after cancel() returned there, e.g. \(late.prefix(5))")
    }

    /// `cancel()` from a plain thread while the loop runs between elements: no new call starts
    /// after it returned; at most the one already decided, and that one sees its task cancelled.
    @Test
    func
        forEachWeak_cancelFromAnotherThread_noNewCallAfterCancelReturned_andTheRunningOneSeesCancellation_10_000_iterations()
        async
    {
        let log = OrderLog<Int>(iterations: Self.iterations)
        // Read right AFTER the start was stamped: a start stamped after cancel() returned must
        // then see its task cancelled (read before the stamp, it could predate the cancel).
        let sawCancellation = Collected<[Int]>()
        for index in 0..<Self.iterations {
            let loopEnded = Gate()
            let ownerReleased = Gate()
            let cancelled = Gate()
            var owner: RaceOwner? = RaceOwner(released: ownerReleased)
            let bag = CancellationBag()
            let token = EndlessCounter(released: loopEnded).forEach(weak: owner!, in: bag) { _, element in
                log.handlerStarted(index, element)
                if Task.isCancelled { sawCancellation.append([index, element]) }
                _ = raceJitter(index % 3)
            }
            cancelFromAThread(token, index, log, then: cancelled)
            await cancelled.wait()
            await loopEnded.wait()
            owner = nil
            await ownerReleased.wait()
            withExtendedLifetime(bag) {}
        }
        #expect(log.everyCancelReturned)
        let late = log.startsAfterCancel()
        let seen = Set(sawCancellation.values)
        let uncancelled = late.filter { !seen.contains([$0.index, $0.event]) }
        #expect(
            uncancelled.isEmpty,
            "calls that started after cancel() returned without seeing cancellation: \(uncancelled.prefix(5))")
        let perIteration = Dictionary(grouping: late, by: \.index).filter { $0.value.count > 1 }
        #expect(perIteration.isEmpty, "more than one call started after cancel() returned: \(perIteration.prefix(3))")
        print(
            "forEach(weak:) cancel from another thread: \(late.count) of \(Self.iterations) iterations had the decided call start after cancel() returned"
        )
    }

    // MARK: - runTask(weak:)

    /// `apply` is isolated to `@HandlerActor`, the work finishes off it, and `cancel()` is made on
    /// the actor: `apply` never starts after `cancel()` returned there.
    @Test func runTaskWeak_cancelOnTheApplysActor_applyNeverStartsAfterCancelReturned_10_000_iterations() async {
        let log = OrderLog<HandlerStart>(iterations: Self.iterations)
        for index in 0..<Self.iterations {
            let taskEnded = Gate()
            let ownerReleased = Gate()
            let cancelled = Gate()
            var owner: RaceOwner? = RaceOwner(released: ownerReleased)
            let bag = CancellationBag()
            let token = runTask(weak: owner!, in: bag) { [end = DeinitSignal(taskEnded)] in
                _ = end
                return index
            } then: { @HandlerActor _, _ in
                log.handlerStarted(index, HandlerStart(element: 0, sawCancellation: Task.isCancelled))
            }
            cancelOnHandlerActor(token, index, log, then: cancelled)
            await cancelled.wait()
            await taskEnded.wait()
            owner = nil
            await ownerReleased.wait()
            withExtendedLifetime(bag) {}
        }
        #expect(log.everyCancelReturned)
        let late = log.startsAfterCancel()
        #expect(late.isEmpty, "\(late.count) apply calls started on the actor after cancel() returned there")
    }

    /// `cancel()` from a plain thread against the work finishing: if `apply` starts after
    /// `cancel()` returned, it is the call already decided, and it sees its task cancelled.
    @Test func runTaskWeak_cancelFromAnotherThread_applyAfterCancelReturnedSeesCancellation_10_000_iterations() async {
        let log = OrderLog<Int>(iterations: Self.iterations)
        let sawCancellation = Collected<Int>()  // read after the stamp, as above
        for index in 0..<Self.iterations {
            let taskEnded = Gate()
            let ownerReleased = Gate()
            let cancelled = Gate()
            var owner: RaceOwner? = RaceOwner(released: ownerReleased)
            let bag = CancellationBag()
            let token = runTask(weak: owner!, in: bag) { [end = DeinitSignal(taskEnded)] in
                _ = end
                return raceJitter(index % 20)
            } then: { _, _ in
                log.handlerStarted(index, 0)
                if Task.isCancelled { sawCancellation.append(index) }
            }
            cancelFromAThread(token, index, log, then: cancelled)
            await cancelled.wait()
            await taskEnded.wait()
            owner = nil
            await ownerReleased.wait()
            withExtendedLifetime(bag) {}
        }
        #expect(log.everyCancelReturned)
        let late = log.startsAfterCancel()
        let seen = Set(sawCancellation.values)
        #expect(
            late.allSatisfy { seen.contains($0.index) },
            "apply started after cancel() returned without seeing cancellation: \(late.prefix(5))")
        print(
            "runTask(weak:) cancel from another thread: \(late.count) of \(Self.iterations) applies started after cancel() returned (each saw cancellation)"
        )
    }
}

/// Cancels `token` on `@HandlerActor`, stamps the return from `cancel()` for iteration `index`,
/// then opens `done`.
private func cancelOnHandlerActor<Event>(
    _ token: Cancellation, _ index: Int, _ log: OrderLog<Event>, then done: Gate
) {
    Task { @HandlerActor in
        token.cancel()
        log.cancelReturned(index)
        done.open()
    }
}

/// The same from a plain Dispatch thread, after a jitter that varies with `index`.
private func cancelFromAThread<Event>(
    _ token: Cancellation, _ index: Int, _ log: OrderLog<Event>, then done: Gate
) {
    DispatchQueue.global().async {
        _ = raceJitter(index % 20)
        token.cancel()
        log.cancelReturned(index)
        done.open()
    }
}
