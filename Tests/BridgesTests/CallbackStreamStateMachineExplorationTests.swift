import BridgesTesting
import TestSupport
import Testing

@testable import Bridges

/// Every interleaving of the stream engine's events, up to a bounded depth, for every kind of
/// buffering policy: the consumer's `next()` (its fast path, the builder, asking for demand before
/// suspending, suspending), yields and sends from the producer (a send may wait, and be cancelled),
/// `finish`, the sink released, demand handlers registered, the teardown returning, and the
/// consumer cancelled or gone. After every event: each continuation resumed at most once, the
/// teardown run at most once and for the right reason, every element produced delivered, dropped,
/// undelivered or still held (exactly one of them), delivered in order, no consumer suspended while
/// something could wake it, no demand granted beyond the room; from every state reached, both ends
/// (the producer finishes and the consumer drains; the consumer leaves) resume everyone and run
/// the teardown exactly once.
@Suite("CallbackStream: state machine exploration", .timeLimit(.minutes(3)))
struct CallbackStreamStateMachineExplorationTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let policy: BufferingPolicy
        let depth: Int
        /// Distinct states measured at `depth`, less a margin: fewer means the exploration
        /// silently stopped reaching states.
        let floor: Int
        /// Where the teardown was written: nonisolated, or on the consumer's actor.
        var place: TeardownPlaceInModel = .anywhere
        var testDescription: String { place == .anywhere ? "\(policy)" : "\(policy), teardown on the consumer's actor" }
    }

    /// Teardowns written on the consumer's actor (a `@MainActor` view model's builder).
    static let isolatedCases: [Case] = [
        Case(policy: .unbounded, depth: 10, floor: 2100, place: .consumersActor),
        Case(policy: .rendezvous, depth: 7, floor: 2700, place: .consumersActor),
        Case(policy: .suspending(1), depth: 7, floor: 2000, place: .consumersActor),
    ]

    static let cases: [Case] = [
        Case(policy: .unbounded, depth: 11, floor: 2000),
        Case(policy: .latest, depth: 11, floor: 1200),
        Case(policy: .drop, depth: 11, floor: 600),
        Case(policy: .dropOldest(2), depth: 11, floor: 1400),
        Case(policy: .dropNewest(2), depth: 11, floor: 1400),
        Case(policy: .rendezvous, depth: 7, floor: 2700),
        Case(policy: .suspending(1), depth: 7, floor: 1900),
        Case(policy: .suspending(2), depth: 7, floor: 1550),
        Case(policy: .watermark(low: 0, high: 2), depth: 7, floor: 1550),
    ]

    /// A synchronous yield while an `await send` waits (or after a
    /// cancelled one, whose element keeps its place) joins the line behind the waiting element,
    /// so one producer's elements arrive in the order it produced them.
    @Test(arguments: [BufferingPolicy.rendezvous, .suspending(1), .watermark(low: 0, high: 2)])
    func yield_whenACancelledSendWaits_queuesBehindItsElement(_ policy: BufferingPolicy) {
        var machine = CallbackStreamStateMachine<Int, Boom, Int>(policy: policy, builder: 0)
        _ = machine.next()  // runs the builder
        var order: [Int] = []
        let first = (policy.capacity ?? 0) + 1
        for element in 1..<first { _ = machine.yield(element) }  // fill the buffer
        guard case .mustWait(_, let senderID) = machine.trySend(first) else {
            Issue.record("the send must wait: the buffer is full")
            return
        }
        guard case .suspended = machine.enqueueSender(first, id: senderID, ContinuationStandIn.make(1)) else {
            Issue.record("the sender must wait")
            return
        }
        #expect(machine.cancelSender(id: senderID) != nil, "the cancelled sender is resumed at once")
        _ = machine.yield(first + 1)
        while case .element(let element, _, _) = machine.next() { order.append(element) }
        #expect(order == Array(1...(first + 1)))
    }

    /// The stream promises that the consumer's loop ends only once the teardown has returned.
    /// When the consumer is cancelled while the teardown runs on another thread (the teardown
    /// queue, for the cancellation handler's, or the producer's after `finish`), the machine
    /// keeps the consumer's continuation and `teardownReturned()` resumes it.
    @Test func cancel_whileAnotherThreadRunsTheTeardown_parksTheConsumerUntilItReturns() {
        typealias Machine = CallbackStreamStateMachine<Int, Boom, Int>
        // The cancellation handler takes the teardown of a consumer parked in next().
        var machine = Machine(policy: .unbounded, builder: 0)
        _ = machine.next()
        _ = machine.builderReturned(Teardown(Cancellation()))
        guard case .suspend = machine.next(), case .suspended = machine.suspend(ContinuationStandIn.make(1)) else {
            Issue.record("nothing buffered: the consumer suspends")
            return
        }
        guard case .terminate(_, nil, _, .runOnQueue(_, .cancelled)?, _, _) = machine.consumerCancelled() else {
            Issue.record("the handler hands the teardown to the queue and leaves the consumer parked")
            return
        }
        #expect(machine.yield(1).isTerminated, "decided: a yield now answers .terminated")
        let resumed = machine.teardownReturned()
        #expect(resumed.map { ContinuationStandIn.id(of: $0.0) } == 1, "the teardown's return resumes the consumer")
        #expect(resumed?.1 == nil)
        let cancelled = machine.takeCancellation()
        #expect(cancelled, "the consumer learns it was cancelled")
        #expect(machine.consumer == nil, "the continuation was moved out")
        // The handler of a consumer about to suspend (not parked yet) takes the teardown too: the
        // consumer then parks until it returned.
        var early = Machine(policy: .unbounded, builder: 0)
        _ = early.next()
        _ = early.builderReturned(Teardown(Cancellation()))
        _ = early.yield(1)
        guard case .terminate(_, nil, _, .runOnQueue(_, .cancelled)?, let discarded, _) = early.consumerCancelled(),
            discarded?.count == 1
        else {
            Issue.record("the handler takes the teardown and the buffered element")
            return
        }
        #expect(early.yield(2).isTerminated, "decided: a yield now answers .terminated")
        guard case .suspended = early.suspend(ContinuationStandIn.make(2)) else {
            Issue.record("the consumer parks until the teardown returned")
            return
        }
        #expect(early.teardownReturned() == nil, "the element the handler discarded is not reported yet")
        #expect(early.reportsReturned().map { ContinuationStandIn.id(of: $0.0) } == 2)
        guard case .cancelled = early.wokenWithNil() else {
            Issue.record("then it learns it was cancelled")
            return
        }
        // The producer finished (its teardown ran and returned) with an element still buffered,
        // then the handler of a consumer about to suspend discards it: no teardown is in flight,
        // and still the loop ends only once the queue reported the element undelivered.
        var drained = Machine(policy: .unbounded, builder: 0)
        _ = drained.next()
        _ = drained.builderReturned(Teardown(Cancellation()))
        guard case .suspend = drained.next() else {
            Issue.record("nothing buffered yet")
            return
        }
        _ = drained.yield(1)
        if case .finish(_, .runHere(_, .finished)?, _) = drained.finish(nil) {
            _ = drained.teardownReturned()
        } else {
            Issue.record("finish() runs the nonisolated teardown on the producer's thread")
        }
        guard case .terminate(_, nil, _, nil, let undelivered, _) = drained.consumerCancelled(),
            undelivered?.count == 1
        else {
            Issue.record("the handler discards the buffered element, with no teardown left to take")
            return
        }
        guard case .suspended = drained.suspend(ContinuationStandIn.make(4)) else {
            Issue.record("the consumer parks until the element was reported")
            return
        }
        #expect(drained.reportsReturned().map { ContinuationStandIn.id(of: $0.0) } == 4)
        guard case .cancelled = drained.wokenWithNil() else {
            Issue.record("then it learns it was cancelled")
            return
        }
        // A consumer handed an element as its task is cancelled: the handler ends the stream, and
        // the element, which the consumer has not received yet, is revoked when its task runs.
        var handed = Machine(policy: .unbounded, builder: 0)
        _ = handed.next()
        _ = handed.builderReturned(Teardown(Cancellation()))
        guard case .suspend = handed.next(), case .suspended = handed.suspend(ContinuationStandIn.make(3)),
            case .resumeConsumer = handed.yield(1),
            case .terminate(_, nil, _, .runOnQueue(_, .cancelled)?, _, _) = handed.consumerCancelled()
        else {
            Issue.record("handed, then the handler takes the teardown")
            return
        }
        let (revoked, _) = handed.handedElementWhileCancelled()
        #expect(revoked, "the element the consumer was handed is undelivered")
        // A consumer that ended the stream itself (it saw its task cancelled) and calls next()
        // while the teardown runs on another thread waits for it.
        var entering = Machine(policy: .unbounded, builder: 0)
        _ = entering.next()
        _ = entering.builderReturned(Teardown(Cancellation()))
        guard case .terminate(_, nil, _, _?, _, _) = entering.consumerTerminated(cancelled: true) else {
            Issue.record("the cancel takes the teardown to run")
            return
        }
        guard case .suspend = entering.next() else {
            Issue.record("the end waits for the teardown")
            return
        }
        _ = entering.teardownReturned()
        guard case .cancelled = entering.next() else {
            Issue.record("then the cancellation is reported")
            return
        }
        // The producer finished and runs the teardown; the consumer waits for the end, and is cancelled.
        var finished = Machine(policy: .unbounded, builder: 0)
        _ = finished.next()
        _ = finished.builderReturned(Teardown(Cancellation()))
        guard case .finish(_, .runHere(_, .finished)?, _) = finished.finish(nil) else {
            Issue.record("the finish takes the teardown")
            return
        }
        guard case .suspended = finished.suspend(ContinuationStandIn.make(2)) else {
            Issue.record("the consumer waits for the teardown to return")
            return
        }
        guard case .terminate(_, nil, _, nil, _, _) = finished.consumerCancelled() else {
            Issue.record("the cancelled consumer was resumed before the teardown returned")
            return
        }
        let ended = finished.teardownReturned()
        #expect(ended.map { ContinuationStandIn.id(of: $0.0) } == 2, "the teardown's return resumes the consumer")
        let cutShort = finished.takeCancellation()
        #expect(!cutShort, "the stream had ended: the cancellation cut nothing short")
    }

    @Test(arguments: cases + isolatedCases)
    func everyInterleaving_keepsTheInvariants(_ testCase: Case) {
        let lifetimes = LiveProbes()
        do {
            let report = exploreStateSpace(
                from: StreamModel(policy: testCase.policy, lifetimes: lifetimes, place: testCase.place),
                depth: testCase.depth)
            #expect(report.violations.isEmpty, "\(report.violations.joined(separator: "\n"))")
            #expect(report.distinctStates >= testCase.floor, "\(report)")
        }
        #expect(lifetimes.count == 0, "every probe (teardown, demand handler) was released")
    }
}

/// What one explored stream's teardown and demand handlers report. Captured by the `@Sendable`
/// closures the machine stores; read by the model between events, on the exploring thread only.
private final class ExploredStreamProbe: @unchecked Sendable {  // one thread: the exploration's
    var teardowns: [String] = []
    var demands: [(handler: Int, count: Int)] = []
    let lifetimes: LiveProbes

    init(_ lifetimes: LiveProbes) {
        self.lifetimes = lifetimes
        lifetimes.count += 1
    }

    deinit { lifetimes.count -= 1 }
}

private func name(_ termination: CallbackStream<Int, Boom>.Termination) -> String {
    switch termination {
    case .finished: "finished"
    case .failed: "failed"
    case .cancelled: "cancelled"
    }
}

private typealias Machine = CallbackStreamStateMachine<Int, Boom, Int>

/// Where an explored stream's teardown was written.
enum TeardownPlaceInModel: Sendable, Hashable {
    /// In nonisolated code: it runs on the thread that ends the stream.
    case anywhere
    /// On the consumer's actor (a `@MainActor` view model's builder, consumed there).
    case consumersActor
}
private typealias Teardown = CallbackStream<Int, Boom>.Teardown

extension StreamRing {
    /// The elements, oldest first, read without taking them.
    fileprivate var snapshot: [Element] {
        if let storage {
            return storage.withUnsafeMutablePointers { header, slots in
                (0..<header.pointee.count).map { slots[(header.pointee.head + $0) % header.pointee.capacity] }
            }
        }
        return first.map { [$0] } ?? []
    }
}

private struct StreamModel: ExplorationModel {
    enum Event: Hashable, CustomStringConvertible {
        case next, builderReturns, teardownReturns, beforeSuspending, suspend, consumerEnds
        /// The consumer's task is cancelled (on the canceller's thread): while the consumer is in
        /// `storage.suspend`, its cancellation handler runs (`consumerCancelled()`); otherwise
        /// the consumer sees `Task.isCancelled` at its next `next()`.
        case cancelTask
        /// The consumer, resumed with nil, asks why (`wokenWithNil()`), in its own task.
        case afterNilWakeup
        case yield, send
        case enqueueSender(UInt64)
        case cancelSender(UInt64)
        case finish(failing: Bool)
        case releaseSink, registerDemand
        /// The actor the teardown belongs to runs the job the stream enqueued there.
        case actorJob
        /// The app starts the same source again on the teardown's actor, once the loop ended:
        /// the new stream's builder runs there.
        case restart
        /// Bridges' teardown queue runs a teardown the consumer's cancellation handler took.
        case queueRuns
        /// The consumer's task, resumed with an element, runs: it returns the element, or, if its
        /// task was cancelled meanwhile, asks whether the cancellation ended the stream.
        case wakeUp

        var description: String {
            switch self {
            case .next: "next"
            case .builderReturns: "builderReturns"
            case .teardownReturns: "teardownReturns"
            case .beforeSuspending: "beforeSuspending"
            case .suspend: "suspend"
            case .consumerEnds: "consumerEnds"
            case .cancelTask: "cancelTask"
            case .afterNilWakeup: "afterNilWakeup"
            case .yield: "yield"
            case .send: "send"
            case .enqueueSender(let id): "enqueueSender(\(id))"
            case .cancelSender(let id): "cancelSender(\(id))"
            case .finish(let failing): failing ? "finish(throwing:)" : "finish()"
            case .releaseSink: "releaseSink"
            case .registerDemand: "registerDemand"
            case .actorJob: "actorJob"
            case .restart: "restart"
            case .queueRuns: "queueRuns"
            case .wakeUp: "wakeUp"
            }
        }
    }

    /// Where the consumer is in `next()`, one lock section at a time.
    enum ConsumerPC: Hashable {
        /// Outside `next()`: the next call takes the fast path (`takeBuffered`, else `next()`).
        case idle
        /// Running the builder (the first `next()`).
        case inBuilder
        /// Running the teardown the builder's return handed it.
        case inTeardown
        /// Back at the top of `next()`'s loop (`next()` only).
        case loop(asked: Bool)
        /// About to ask for demand before suspending.
        case beforeSuspending
        /// About to hand its continuation over.
        case suspending
        case suspended(Int)
        /// Resumed with this element; its task has not run yet (its cancellation handler is still
        /// installed).
        case handed(Int)
        /// Resumed with nil; about to ask `wokenWithNil()`.
        case wokenWithNil
        /// Saw the end, or left.
        case done
    }

    enum SenderPC: Hashable { case trying, suspended }

    struct SenderGhost: Hashable {
        let id: UInt64
        var pc: SenderPC
        var cancels = 0
    }

    /// What the thread that took the teardown does once it returns.
    enum AfterTeardown: Hashable {
        case consumerLoops
        /// The consumer ended the stream itself (it saw its cancellation): resume the waiting
        /// senders with `.terminated`, then it asks `next()` again.
        case consumerTerminated(senders: [Int])
        case resume(consumer: Int?, end: Boom?, senders: [Int], senderResult: String)
        case nothing
    }

    let policy: BufferingPolicy
    let place: TeardownPlaceInModel
    let lifetimes: LiveProbes
    let probe: ExploredStreamProbe
    var machine: Machine
    /// Where the machine is told the teardown may run.
    var machinePlace: Machine.TeardownPlace { place == .anywhere ? .anywhere : .consumersActor }
    var history: [Event] = []
    /// Re-applying events already checked (a fork): the invariants are not checked again.
    var replaying = false

    // The consumer.
    var consumer = ConsumerPC.idle
    var consumerEnds = 0
    var nextConsumerID = 1
    var endSeen: Boom?? = nil
    /// The consumer's end was its cancellation (`.cancelled`), not the stream's end.
    var sawCancellation = false
    /// The consumer's task was cancelled.
    var taskCancelled = false
    /// The machine accepted `finish(throwing:)` while streaming: the stream ended with a
    /// failure, which the consumer must see (thrown), whatever cancellation comes after.
    var failureStored = false
    // The producer.
    var senders: [SenderGhost] = []
    var finishes = 0
    var sinkReleased = false
    var producerFinished = false
    var handlers = 0
    /// Demand reported to the current handler and not yet used by an element.
    var outstanding = 0
    /// The machine holds a demand handler it has not handed back (to be released outside the lock).
    var handlerStored = false
    // The builder and the teardown.
    var builderRan = false
    var builderReleasedUnrun = false
    var teardownInFlight: AfterTeardown?
    /// The stream enqueued a job on its teardown's actor, which has not run yet.
    var actorJobPending = false
    /// A teardown the cancellation handler handed to the teardown queue, not run yet.
    var queuedTeardown: (Teardown, CallbackStream<Int, Boom>.Termination)?
    /// The handler's teardown is on the queue, run or not, and has not returned.
    var queueHoldsTheTeardown = false
    /// The elements the handler discarded, which the queue reports as undelivered (nil: no
    /// reports handed to the queue).
    var queuedReports: [Int]?
    /// The queue reported them and, since it also runs the teardown, tells the machine only
    /// once that returned (`reportsReturned()` after `teardownReturned()`).
    var reportsReturnPending = false
    /// The app started the source again on the teardown's actor.
    var restarted = false
    /// The consumer's cancellation was decided while the stream was still live (its handler
    /// ran, or it saw `Task.isCancelled`): whatever the producer does next, it ends `.cancelled`.
    var cancelDecided = false
    var firstEnd: String?
    // Continuations: handed to the machine, and how often each was resumed.
    var handedIn: Set<Int> = []
    var resumed: [Int: Int] = [:]
    // Elements, by id in the order they entered the machine.
    var produced = 0
    var delivered: [Int] = []
    var dropped: Set<Int> = []
    var undelivered: Set<Int> = []
    /// Elements the consumer discarded by leaving (the others undelivered came after the end).
    var discardedByTheConsumer = 0

    init(policy: BufferingPolicy, lifetimes: LiveProbes, place: TeardownPlaceInModel = .anywhere) {
        self.policy = policy
        self.place = place
        self.lifetimes = lifetimes
        probe = ExploredStreamProbe(lifetimes)
        machine = Machine(policy: policy, builder: 7)
    }

    var waiting: Bool { policy.isWaiting }
    var capacity: Int { policy.capacity ?? Int.max }

    func fork() -> StreamModel {
        var copy = StreamModel(policy: policy, lifetimes: lifetimes, place: place)
        copy.replaying = true
        for event in history { _ = copy.apply(event) }
        copy.replaying = false
        return copy
    }

    // MARK: - Enabled events

    var enabledEvents: [Event] {
        var events: [Event] = []
        switch consumer {
        case .idle, .loop: events.append(.next)
        case .inBuilder: events.append(.builderReturns)
        case .inTeardown: break
        case .beforeSuspending: events.append(.beforeSuspending)
        case .suspending: events.append(.suspend)
        case .suspended, .done: break
        case .handed: events.append(.wakeUp)
        case .wokenWithNil: events.append(.afterNilWakeup)
        }
        switch consumer {
        case .idle, .done:
            // The iterator released: only between `next()` calls (a suspended consumer's task
            // holds it).
            if consumerEnds < 2 { events.append(.consumerEnds) }
        default: break
        }
        if !taskCancelled && consumer != .done { events.append(.cancelTask) }
        if teardownInFlight != nil { events.append(.teardownReturns) }
        if actorJobPending { events.append(.actorJob) }
        if queuedTeardown != nil || queuedReports != nil { events.append(.queueRuns) }
        if consumer == .done && builderRan && !restarted { events.append(.restart) }
        if builderRan && !sinkReleased {
            events.append(.yield)
            if senders.count < 2 { events.append(.send) }
            if finishes < 2 {
                events.append(.finish(failing: false))
                events.append(.finish(failing: true))
            }
            if senders.isEmpty { events.append(.releaseSink) }  // a send in progress holds the sink
            if waiting && handlers < 2 { events.append(.registerDemand) }
        }
        for sender in senders {
            if sender.pc == .trying { events.append(.enqueueSender(sender.id)) }
            if sender.cancels < 2 { events.append(.cancelSender(sender.id)) }
        }
        return events
    }

    // MARK: - Applying an event

    mutating func apply(_ event: Event) -> [String] {
        history.append(event)
        var broken: [String] = []
        let resumedBefore = resumed.values.reduce(0, +)
        switch event {
        case .next where consumer == .idle && taskCancelled:
            // `next()` sees `Task.isCancelled`: ends the stream in this task, then asks `next()`.
            if firstEnd == nil { cancelDecided = true }
            consumerTerminatesItself(&broken)
        case .next:
            let fast = consumer == .idle
            let action: Machine.NextAction
            if fast, let element = machine.takeBuffered() {
                action = .element(element, sender: nil, demand: nil)
            } else {
                action = machine.next()
            }
            if case .loop(let asked) = consumer {
                consumerActs(action, asked: asked, &broken)
            } else {
                consumerActs(action, asked: false, &broken)
            }
        case .builderReturns:
            let probe = self.probe
            let teardown = Teardown.onTermination { termination in probe.teardowns.append(name(termination)) }
            if perform(machine.builderReturned(teardown, place: machinePlace), then: .consumerLoops, &broken) {
                consumer = .inTeardown
            } else {
                consumer = .loop(asked: false)
            }
        case .teardownReturns:
            teardownReturns(&broken)
        case .beforeSuspending:
            if let demand = machine.demandBeforeSuspending() {
                demand.report()
                consumer = .loop(asked: true)
            } else {
                consumer = .suspending
            }
        case .suspend:
            // A task cancelled before it got here runs its handler as the handler is installed.
            if taskCancelled { cancellationHandlerRuns(&broken) }
            let id = nextConsumerID
            nextConsumerID += 1
            handedIn.insert(id)
            consumer = .suspended(id)
            switch machine.suspend(ContinuationStandIn.make(id)) {
            case .suspended(let demand):
                demand?.report()
            case .resume(let continuation, let delivery, let sender):
                if let sender { resumeSender(ContinuationStandIn.id(of: sender), ".enqueued", &broken) }
                deliver(delivery, to: ContinuationStandIn.id(of: continuation), &broken)
            case .concurrentIteration:
                broken.append("one consumer was told another was iterating")
            }
        case .cancelTask:
            taskCancelled = true
            switch consumer {
            case .suspending, .suspended, .handed:
                if firstEnd == nil { cancelDecided = true }
                cancellationHandlerRuns(&broken)
            default:
                break  // no handler installed: the next `next()` sees the cancellation
            }
        case .afterNilWakeup:
            switch machine.wokenWithNil() {
            case .teardown(let work):
                consumerTakes(work, &broken)
            case .askAgain:
                consumer = .loop(asked: false)
            case .cancelled:
                sawCancellation = true
                seeEnd(nil, &broken)
            case .end(let failure):
                seeEnd(failure, &broken)
            }
        case .consumerEnds:
            consumerEnds += 1
            if consumer == .idle { consumer = .done }
            switch machine.consumerTerminated(cancelled: false) {
            case .none:
                break
            case .terminate(
                let builder, let waitingConsumer, let waitingSenders, let teardown, let discarded, let demand):
                if firstEnd == nil { firstEnd = "cancelled" }
                if builder != nil { builderReleasedUnrun = true }
                if builder != nil && builderRan { broken.append("the builder was handed back after it ran") }
                if demand != nil { handlerStored = false }
                for element in discarded?.snapshot ?? [] { markUndelivered(element, &broken) }
                for sender in waitingSenders { markUndelivered(sender.element, &broken) }
                discardedByTheConsumer += (discarded?.count ?? 0) + waitingSenders.count
                let ids = waitingSenders.compactMap { $0.continuation.map(ContinuationStandIn.id(of:)) }
                let after = AfterTeardown.resume(
                    consumer: waitingConsumer.map(ContinuationStandIn.id(of:)), end: nil, senders: ids,
                    senderResult: ".terminated"
                )
                perform(teardown, then: after, &broken)
            }
            // A consumer leaves its loop (its iterator released) only when its task is not parked
            // in `next()`; one whose handler handed the teardown to the queue was parked or was
            // handed an element, which is revoked: its loop ends after that teardown returned.
            if queueHoldsTheTeardown {
                broken.append("the loop ended while its cancellation handler's teardown was on the queue")
            }
            // The loop ended on the actor its teardown was written on (the iterator is released
            // there): the teardown has run by the next statement.
            if place == .consumersActor && builderRan && probe.teardowns.isEmpty {
                broken.append("the loop ended on the teardown's actor before its teardown ran")
            }
        case .yield:
            let id = newElement()
            let action = machine.yield(id)
            producerActs(action, element: id, &broken)
        case .send:
            let id = newElement()
            switch machine.trySend(id) {
            case .done(let action):
                producerActs(action, element: id, &broken)
            case .mustWait(_, let senderID):
                produced -= 1  // it enters the machine when the sender is enqueued
                senders.append(SenderGhost(id: senderID, pc: .trying))
            }
        case .enqueueSender(let senderID):
            let index = senders.firstIndex { $0.id == senderID }!
            let continuationID = 1_000 + Int(senderID)
            handedIn.insert(continuationID)
            let id = newElement()
            switch machine.enqueueSender(id, id: senderID, ContinuationStandIn.make(continuationID)) {
            case .suspended:
                senders[index].pc = .suspended
                if outstanding > 0 && machine.phaseIsStreaming { outstanding -= 1 }
            case .resumeNow(let continuation, let action):
                senders.remove(at: index)
                let result = producerActs(action, element: id, &broken)
                resumeSender(ContinuationStandIn.id(of: continuation), result, &broken)
            }
        case .cancelSender(let senderID):
            let index = senders.firstIndex { $0.id == senderID }!
            senders[index].cancels += 1
            if let continuation = machine.cancelSender(id: senderID) {
                senders.remove(at: index)
                resumeSender(ContinuationStandIn.id(of: continuation), ".stopProducing", &broken)
            }
        case .finish(let failing):
            finishes += 1
            if failing && machine.phaseIsStreaming { failureStored = true }
            let hadFinished = producerFinished
            producerFinished = true
            finishActs(machine.finish(failing ? Boom() : nil), hadFinished: hadFinished, failing: failing, &broken)
        case .releaseSink:
            sinkReleased = true
            let hadFinished = producerFinished
            producerFinished = true
            if let action = machine.producerReleased(lostProducer: nil) {
                if hadFinished { broken.append("a released sink finished a stream its producer had finished") }
                finishActs(action, hadFinished: false, failing: false, &broken)
            }
        case .actorJob:
            // The job the stream enqueued on the teardown's actor (`ActorTeardowns`): it runs the
            // teardown and returns, in one job of that actor, which the consumer (iterating there)
            // cannot interleave with.
            actorJobPending = false
            if let (teardown, termination) = machine.takeEnqueuedTeardown() {
                runTeardown(teardown, termination, then: .nothing, &broken)
                teardownReturns(&broken)
            }
        case .restart:
            restarted = true
            // The new stream's builder, on the actor the old teardown belongs to: that actor first
            // runs the teardowns still enqueued on it (`ActorTeardowns.runAll`), synchronously.
            if let (teardown, termination) = machine.takeEnqueuedTeardown() {
                runTeardown(teardown, termination, then: .nothing, &broken)
                teardownReturns(&broken)
            }
            if builderRan && probe.teardowns.count != 1 {
                broken.append("a teardown ran after a later builder of the same source on its actor")
            }
        case .wakeUp:
            guard case .handed(let element) = consumer else { break }
            if taskCancelled {
                let (revoked, action) = machine.handedElementWhileCancelled()
                if revoked {
                    consumer = .idle
                    markUndelivered(element, &broken)
                    discardedByTheConsumer += 1
                    consumerActsOnItsOwnEnd(action, &broken)
                    break
                }
            }
            receive(element, &broken)
            consumer = .idle
        case .queueRuns:
            // Bridges' teardown queue runs the work item a cancellation handler handed it: the
            // teardown, then the reports of what the handler discarded, then their returns.
            if let (teardown, termination) = queuedTeardown {
                queuedTeardown = nil
                runTeardown(teardown, termination, then: .nothing, &broken)
            }
            if let reports = queuedReports {
                queuedReports = nil
                for element in reports { markUndelivered(element, &broken) }
                if queueHoldsTheTeardown { reportsReturnPending = true } else { reportsReturn(&broken) }
            }
        case .registerDemand:
            handlers += 1
            let probe = self.probe
            let handler = handlers
            let (initial, replaced) = machine.registerDemand { count in probe.demands.append((handler, count)) }
            if replaced != nil { handlerStored = false }
            // (After the end nothing is registered: a handler still held stays for the consumer.)
            if handlerStored && !machine.isTerminated {
                broken.append("a demand handler was replaced and not handed back")
            }
            if machine.isTerminated {
                if initial != nil { broken.append("demand was granted to a stream that had ended") }
            } else {
                handlerStored = true
                outstanding = 0
                if let initial { probe.demands.append((handler, initial)) }
            }
        }
        collectDemand(&broken)
        if replaying { return [] }
        if resumed.values.reduce(0, +) - resumedBefore > 2, !event.endsTheStream {
            broken.append("\(event) resumed \(resumed.values.reduce(0, +) - resumedBefore) continuations")
        }
        checkInvariants(&broken)
        return broken
    }

    // MARK: - Acting as the storage does

    mutating func newElement() -> Int {
        produced += 1
        return produced
    }

    mutating func consumerActs(_ action: Machine.NextAction, asked: Bool, _ broken: inout [String]) {
        switch action {
        case .element(let element, let sender, let demand):
            if let sender { resumeSender(ContinuationStandIn.id(of: sender), ".enqueued", &broken) }
            demand?.report()
            receive(element, &broken)
            consumer = .idle
        case .end(let failure):
            seeEnd(failure, &broken)
        case .cancelled:
            sawCancellation = true
            seeEnd(nil, &broken)
        case .runBuilder(let builder):
            if builder != 7 || builderRan { broken.append("the builder was handed out twice") }
            builderRan = true
            consumer = .inBuilder
        case .teardown(let work):
            consumerTakes(work, &broken)
        case .askProducer(let demand):
            demand.report()
            consumer = .loop(asked: true)
        case .suspend:
            consumer = asked ? .suspending : .beforeSuspending
        }
    }

    enum Wakeup {
        case element(Int)
        case end(Boom?)
    }

    mutating func resumeConsumer(_ id: Int, with wakeup: Wakeup, _ broken: inout [String]) {
        noteResumed(id, &broken)
        guard consumer == .suspended(id) else {
            broken.append("consumer continuation \(id) resumed while the consumer was \(consumer)")
            return
        }
        switch wakeup {
        case .element(let element):
            consumer = .handed(element)  // received once its task runs (`wakeUp`)
        case .end(nil):
            consumer = .wokenWithNil  // the consumer asks why in its own step
        case .end(let failure?):
            seeEnd(failure, &broken)
        }
    }

    /// The consumer ends the stream in its own task (it saw its cancellation): the storage's
    /// `terminateConsumer(cancelled: true)`, then `next()` again.
    mutating func consumerTerminatesItself(_ broken: inout [String]) {
        consumerActsOnItsOwnEnd(machine.consumerTerminated(cancelled: true), &broken)
    }

    /// Acts, as the consumer's own task does, on an end it decided, then asks `next()` again.
    mutating func consumerActsOnItsOwnEnd(_ action: Machine.TerminateAction, _ broken: inout [String]) {
        switch action {
        case .none:
            consumer = .loop(asked: false)
        case .terminate(let builder, let waitingConsumer, let waitingSenders, let teardown, let discarded, let demand):
            if firstEnd == nil { firstEnd = "cancelled" }
            if builder != nil { builderReleasedUnrun = true }
            if builder != nil && builderRan { broken.append("the builder was handed back after it ran") }
            if waitingConsumer != nil { broken.append("the consumer ending the stream found itself suspended") }
            if demand != nil { handlerStored = false }
            for element in discarded?.snapshot ?? [] { markUndelivered(element, &broken) }
            for sender in waitingSenders { markUndelivered(sender.element, &broken) }
            discardedByTheConsumer += (discarded?.count ?? 0) + waitingSenders.count
            let ids = waitingSenders.compactMap { $0.continuation.map(ContinuationStandIn.id(of:)) }
            if case .runOnQueue? = teardown { broken.append("the consumer handed its own teardown to the queue") }
            if perform(teardown, then: .consumerTerminated(senders: ids), &broken) {
                consumer = .inTeardown
            }
        }
    }

    mutating func deliver(_ delivery: Machine.Wakeup, to id: Int, _ broken: inout [String]) {
        switch delivery.result {
        case .success(let element?):
            delivery.demand?.report()
            resumeConsumer(id, with: .element(element), &broken)
        case .success(nil):
            resumeConsumer(id, with: .end(nil), &broken)
        case .failure(let failure):
            resumeConsumer(id, with: .end(failure), &broken)
        }
    }

    mutating func receive(_ element: Int, _ broken: inout [String]) {
        if let last = delivered.last, element <= last { broken.append("element \(element) delivered after \(last)") }
        if dropped.contains(element) || undelivered.contains(element) || delivered.contains(element) {
            broken.append("element \(element) delivered after it was accounted for")
        }
        delivered.append(element)
    }

    /// The queue made the reports the cancellation handler handed it: the machine resumes a
    /// consumer that waited for them.
    mutating func reportsReturn(_ broken: inout [String]) {
        if let (continuation, failure) = machine.reportsReturned() {
            resumeConsumer(ContinuationStandIn.id(of: continuation), with: .end(failure), &broken)
        }
    }

    mutating func seeEnd(_ failure: Boom?, _ broken: inout [String]) {
        if endSeen != nil { broken.append("the consumer saw the end twice") }
        // Its loop ends with every element accounted for: none still waits to be reported.
        if queuedReports != nil || reportsReturnPending {
            broken.append("the consumer saw the end before the elements its cancellation discarded were reported")
        }
        endSeen = .some(failure)
        consumer = .done
        if builderRan && (probe.teardowns.count != 1 || teardownInFlight != nil) {
            broken.append("the consumer saw the end before the teardown had returned")
        }
        if failure != nil && firstEnd != "failed" { broken.append("the consumer saw a failure nobody finished with") }
        // A stream ends as it ended: a failure stored before the cancellation is thrown.
        if failureStored && failure == nil {
            broken.append(
                "a failure the producer stored was lost (the loop ended \(sawCancellation ? "cancelled" : "normally"))")
        }
        // Cancellation never reads as completion.
        if failure == nil && !sawCancellation && firstEnd == "cancelled" && !producerFinished {
            broken.append("the consumer's cancellation read as a complete loop")
        }
        if sawCancellation && !taskCancelled {
            broken.append("a consumer whose task was not cancelled saw a cancellation")
        }
        if cancelDecided && !sawCancellation {
            broken.append(
                "a cancelled consumer's loop ended \(failure.map { "with \($0)" } ?? "as complete"): the producer decided after the cancel"
            )
        }
    }

    mutating func noteResumed(_ id: Int, _ broken: inout [String]) {
        if !handedIn.contains(id) { broken.append("continuation \(id) resumed but never handed in") }
        resumed[id, default: 0] += 1
        if resumed[id]! > 1 { broken.append("continuation \(id) resumed \(resumed[id]!) times") }
    }

    mutating func resumeSender(_ id: Int, _ result: String, _ broken: inout [String]) {
        noteResumed(id, &broken)
        senders.removeAll { 1_000 + Int($0.id) == id }
    }

    /// Acts on a yield's (or send's) action; returns the answer the producer gets.
    @discardableResult
    mutating func producerActs(_ action: Machine.YieldAction, element: Int, _ broken: inout [String]) -> String {
        switch action {
        case .resumeConsumer(let continuation, let handed, let demand, let result):
            if waiting && outstanding > 0 { outstanding -= 1 }
            if handed != element { broken.append("a yield handed over \(handed), not \(element)") }
            demand?.report()
            resumeConsumer(ContinuationStandIn.id(of: continuation), with: .element(handed), &broken)
            return "\(result)"
        case .answer(let result):
            if waiting && outstanding > 0 { outstanding -= 1 }
            if case .stopProducing = result, !waiting { broken.append("a lossy policy told its producer to stop") }
            return "\(result)"
        case .dropped(let element):
            if waiting { broken.append("a waiting policy dropped \(element)") }
            if dropped.contains(element) || undelivered.contains(element) || delivered.contains(element) {
                broken.append("element \(element) dropped after it was accounted for")
            }
            dropped.insert(element)
            return ".dropped"
        case .terminated(let handed, let report):
            if report != producerFinished || (sinkReleased && report) {
                broken.append(
                    "a yield after the end reported misuse: \(report), the producer had finished: \(producerFinished)")
            }
            markUndelivered(handed, &broken)
            return ".terminated"
        }
    }

    mutating func markUndelivered(_ element: Int, _ broken: inout [String]) {
        if dropped.contains(element) || undelivered.contains(element) || delivered.contains(element) {
            broken.append("element \(element) undelivered after it was accounted for")
        }
        undelivered.insert(element)
    }

    mutating func finishActs(_ action: Machine.FinishAction, hadFinished: Bool, failing: Bool, _ broken: inout [String])
    {
        switch action {
        case .none:
            if failing && firstEnd == "cancelled" && !hadFinished {
                broken.append("a failure after the end was swallowed")
            }
        case .reportFinishAfterFinish:
            if !hadFinished { broken.append("a first finish was reported as a second") }
        case .reportFailureAfterEnd:
            if firstEnd != "cancelled" || hadFinished { broken.append("a failure was reported as reaching nobody") }
        case .finish(let waitingSenders, let teardown, let demand):
            if hadFinished { broken.append("a second finish finished the stream again") }
            if firstEnd == nil { firstEnd = failing ? "failed" : "finished" }
            if demand != nil { handlerStored = false }
            if place != .anywhere, case .runHere? = teardown {
                broken.append("the producer was told to run a teardown written on the consumer's actor")
            }
            let after = AfterTeardown.resume(
                consumer: nil, end: nil, senders: waitingSenders.map(ContinuationStandIn.id(of:)),
                senderResult: ".enqueued")
            perform(teardown, then: after, &broken)
        }
    }

    mutating func runTeardown(
        _ teardown: Teardown, _ termination: CallbackStream<Int, Boom>.Termination, then after: AfterTeardown,
        _ broken: inout [String]
    ) {
        if teardownInFlight != nil { broken.append("a teardown was taken while another ran") }
        teardown.runHere(termination)
        checkTeardown(learned: name(termination), &broken)
        teardownInFlight = after
    }

    /// Acts on a teardown the way the storage's `perform` does, for every ender but the
    /// cancellation handler: `after` is what the thread does once a teardown it runs here
    /// returns, or at once when the teardown is enqueued on its actor. Returns whether it runs here.
    @discardableResult
    mutating func perform(_ work: Machine.TeardownWork?, then after: AfterTeardown, _ broken: inout [String]) -> Bool {
        switch work {
        case .runHere(let teardown, let termination)?:
            runTeardown(teardown, termination, then: after, &broken)
            return true
        case .enqueue?:
            if place == .anywhere { broken.append("a nonisolated teardown was enqueued on an actor") }
            if actorJobPending { broken.append("a teardown was enqueued twice") }
            actorJobPending = true
        case .runOnQueue?:
            broken.append("only a cancellation handler hands a teardown to the queue")
        case nil:
            break
        }
        act(after, &broken)
        return false
    }

    /// The consumer runs a teardown enqueued on its own actor, then asks `next()` again.
    mutating func consumerTakes(_ work: Machine.TeardownWork, _ broken: inout [String]) {
        if case .runOnQueue = work { broken.append("the consumer was told to hand a teardown to the queue") }
        if perform(work, then: .consumerLoops, &broken) {
            consumer = .inTeardown
        } else {
            consumer = .loop(asked: false)
        }
    }

    /// The teardown that ran here returned: the machine resumes a consumer waiting for the end,
    /// and the thread that ran it goes on.
    mutating func teardownReturns(_ broken: inout [String]) {
        let after = teardownInFlight!
        teardownInFlight = nil
        queueHoldsTheTeardown = false
        if let (continuation, failure) = machine.teardownReturned() {
            resumeConsumer(ContinuationStandIn.id(of: continuation), with: .end(failure), &broken)
        }
        if reportsReturnPending {
            reportsReturnPending = false
            reportsReturn(&broken)
        }
        switch after {
        case .consumerLoops:
            consumer = .loop(asked: false)
        case .consumerTerminated(let waitingSenders):
            for id in waitingSenders { resumeSender(id, ".terminated", &broken) }
            consumer = .loop(asked: false)
        case .resume(let waitingConsumer, let end, let waitingSenders, let result):
            if let waitingConsumer { resumeConsumer(waitingConsumer, with: .end(end), &broken) }
            for id in waitingSenders { resumeSender(id, result, &broken) }
        case .nothing:
            break
        }
    }

    /// The consumer task's cancellation handler, as the storage's `cancelConsumer()` acts: it
    /// decides the end, resumes waiting senders, and hands the teardown to the queue or its
    /// actor; it runs no teardown and no user code itself.
    mutating func cancellationHandlerRuns(_ broken: inout [String]) {
        let teardownsBefore = probe.teardowns.count
        switch machine.consumerCancelled() {
        case .none:
            break

        case .terminate(let builder, let waitingConsumer, let waitingSenders, let work, let discarded, let demand):
            if firstEnd == nil { firstEnd = "cancelled" }
            if builder != nil { broken.append("a cancellation handler released the builder") }
            if demand != nil { handlerStored = false }
            // Reported on the queue, never in the handler (user code).
            let reports = (discarded?.snapshot ?? []) + waitingSenders.map(\.element)
            if !reports.isEmpty {
                if queuedReports != nil { broken.append("a cancellation handler discarded elements twice") }
                queuedReports = reports
            }
            discardedByTheConsumer += reports.count
            for continuation in waitingSenders.compactMap(\.continuation) {
                resumeSender(ContinuationStandIn.id(of: continuation), ".terminated", &broken)
            }
            if let waitingConsumer {
                resumeConsumer(ContinuationStandIn.id(of: waitingConsumer), with: .end(nil), &broken)
            }
            switch work {
            case .runOnQueue(let teardown, let termination)?:
                if place != .anywhere { broken.append("a teardown written on an actor was handed to the queue") }
                if queuedTeardown != nil || teardownInFlight != nil {
                    broken.append("a teardown was taken while another ran")
                }
                queuedTeardown = (teardown, termination)
                queueHoldsTheTeardown = true
            case .enqueue?:
                if place == .anywhere { broken.append("a nonisolated teardown was enqueued on an actor") }
                if actorJobPending { broken.append("a teardown was enqueued twice") }
                actorJobPending = true
            case .runHere?:
                broken.append("a cancellation handler was told to run the teardown")
            case nil:
                break
            }
        }
        if probe.teardowns.count != teardownsBefore {
            broken.append("a teardown ran inside the task's cancellation handler")
        }
    }

    func checkTeardown(learned termination: String, _ broken: inout [String]) {
        if probe.teardowns.count > 1 { broken.append("the teardown ran \(probe.teardowns.count) times") }
        if let firstEnd, termination != firstEnd {
            broken.append("the teardown learned \(termination), the stream ended as \(firstEnd)")
        }
        if cancelDecided && termination != "cancelled" {
            broken.append("a cancelled consumer's stream ended \(termination): the producer decided after the cancel")
        }
    }

    mutating func act(_ after: AfterTeardown, _ broken: inout [String]) {
        if case .consumerTerminated(let waitingSenders) = after {
            for id in waitingSenders { resumeSender(id, ".terminated", &broken) }
            consumer = .loop(asked: false)
        }
        if case .resume(let waitingConsumer, let end, let waitingSenders, let result) = after {
            if let waitingConsumer { resumeConsumer(waitingConsumer, with: .end(end), &broken) }
            for id in waitingSenders { resumeSender(id, result, &broken) }
        }
    }

    mutating func collectDemand(_ broken: inout [String]) {
        for (handler, count) in probe.demands {
            if count <= 0 { broken.append("demand of \(count) reported") }
            if handler == handlers { outstanding += count }
        }
        probe.demands.removeAll()
    }

    // MARK: - Invariants

    var live: [Int] {
        var held = machine.buffer.snapshot + machine.senders.map(\.element) + (queuedReports ?? [])
        if case .handed(let element) = consumer { held.append(element) }
        return held
    }

    func checkInvariants(_ broken: inout [String]) {
        let live = self.live
        var seen = Set(delivered)
        for group in [Array(dropped), Array(undelivered), live] {
            for element in group where !seen.insert(element).inserted {
                broken.append("element \(element) is accounted for twice")
            }
        }
        if seen != Set(produced == 0 ? [] : Array(1...produced)) {
            broken.append(
                "accounting: produced \(produced), delivered \(delivered.count) + dropped \(dropped.count) + undelivered \(undelivered.count) + held \(live.count)"
            )
        }
        if machine.droppedCount != dropped.count {
            broken.append("droppedCount \(machine.droppedCount), dropped \(dropped.count)")
        }
        if policy.isLossy, machine.buffer.count > capacity {
            broken.append("a lossy buffer holds \(machine.buffer.count) > \(capacity)")
        }
        // A consumer suspended must be the one the machine holds, or one a returning teardown resumes.
        if case .suspended(let id) = consumer {
            let held = machine.consumer.map(ContinuationStandIn.id(of:)) == id
            var pending = false
            if case .resume(let waitingConsumer, _, _, _)? = teardownInFlight, waitingConsumer == id { pending = true }
            if !held && !pending { broken.append("the consumer is suspended and nothing holds its continuation") }
        }
        if machine.consumer != nil {
            let takeable = machine.buffer.snapshot + machine.senders.map(\.element)
            if !takeable.isEmpty { broken.append("the consumer waits while \(takeable) could be taken") }
            if case .finished = machine.phase, machine.teardownDone {
                broken.append("the consumer waits for an end whose teardown has returned")
            }
        }
        // A pull source (waiting policy with a demand handler) must have been asked for an element
        // while the consumer waits for one, or both wait forever.
        if waiting, case .suspended = consumer, machine.demandHandler != nil, case .streaming = machine.phase,
            outstanding == 0, machine.senders.isEmpty
        {
            broken.append("the consumer waits and its pull source was granted no demand")
        }
        if waiting, machine.demandHandler != nil {
            if machine.granted != outstanding {
                broken.append("granted \(machine.granted), the producer was told \(outstanding)")
            }
            let room = capacity - machine.buffer.count - machine.senders.count
            let bound = capacity == 0 ? 1 : max(room, 0)
            if outstanding > bound { broken.append("demand \(outstanding) granted beyond the room \(room)") }
        }
    }

    // MARK: - Endings

    func checkEndings() -> [String] {
        var broken: [String] = []
        for producerEnds in [true, false] {
            var model = fork()
            var steps = 0
            var initiated = false
            while steps < 60 {
                steps += 1
                let events = model.enabledEvents
                let initiator: Event =
                    producerEnds ? .finish(failing: false) : events.contains(.cancelTask) ? .cancelTask : .consumerEnds
                let progress: [Event] =
                    [.builderReturns, .teardownReturns, .actorJob, .queueRuns]
                    + model.senders.filter { $0.pc == .trying }.map { .enqueueSender($0.id) }
                    + [.wakeUp, .next, .beforeSuspending, .suspend, .afterNilWakeup]
                let event: Event?
                if !initiated, !model.producerFinished || !producerEnds, events.contains(initiator) {
                    initiated = true
                    event = initiator
                } else {
                    event = progress.first { events.contains($0) }
                }
                guard let event else { break }
                let failures = model.apply(event)
                if !failures.isEmpty {
                    broken += failures.map {
                        "\($0) (ending: \(producerEnds ? "producer finishes" : "consumer leaves"), at \(event))"
                    }
                    return broken
                }
            }
            broken += model.terminalViolations(producerEnds ? "producer finishes" : "consumer leaves")
        }
        return broken
    }

    func terminalViolations(_ ending: String) -> [String] {
        var broken: [String] = []
        if consumer != .done { broken.append("\(ending): the consumer never ends (\(consumer))") }
        if teardownInFlight != nil { broken.append("\(ending): a teardown never returned") }
        let unresumed = handedIn.filter { resumed[$0] != 1 }
        if !unresumed.isEmpty { broken.append("\(ending): continuations \(unresumed.sorted()) never resumed") }
        if actorJobPending { broken.append("\(ending): a job enqueued on the teardown's actor never ran") }
        if queuedTeardown != nil { broken.append("\(ending): a teardown handed to the queue never ran") }
        if queuedReports != nil || reportsReturnPending {
            broken.append("\(ending): the reports handed to the queue were never made")
        }
        if builderRan && probe.teardowns.count != 1 {
            broken.append("\(ending): the teardown ran \(probe.teardowns.count) times")
        }
        if !builderRan && (!probe.teardowns.isEmpty || !builderReleasedUnrun) {
            broken.append("\(ending): an unrun builder was not released")
        }
        if !live.isEmpty { broken.append("\(ending): elements \(live) still held") }
        if case .spent = machine.teardown {
        } else {
            broken.append("\(ending): the machine still holds its teardown (\(machine.teardown))")
        }
        if machine.demandHandler != nil { broken.append("\(ending): the demand handler is still held") }
        if handlerStored { broken.append("\(ending): no action handed the demand handler back") }
        if consumerEnds == 0 && !taskCancelled && discardedByTheConsumer > 0 {
            broken.append("\(ending): \(discardedByTheConsumer) elements discarded though the consumer never left")
        }
        if consumerEnds == 0, !taskCancelled, case .some(let end) = endSeen, (end != nil) != (firstEnd == "failed") {
            broken.append(
                "\(ending): the consumer saw \(String(describing: end)), the stream ended as \(firstEnd ?? "-")")
        }
        return broken
    }

    // MARK: - Key

    var key: String {
        let live = self.live
        let rank = Dictionary(uniqueKeysWithValues: live.sorted().enumerated().map { ($1, $0) })
        var parts: [String] = []
        parts.append("\(machine.phase)")
        parts.append(teardownCase)
        parts.append(machine.consumer == nil ? "-" : "c")
        parts.append(machine.buffer.snapshot.map { "\(rank[$0]!)" }.joined(separator: ","))
        parts.append(
            machine.senders.map { "\(rank[$0.element]!)\($0.continuation == nil ? "x" : "")" }.joined(separator: ","))
        if waiting {
            parts.append("g\(machine.granted)h\(machine.demandHandler != nil)o\(outstanding)n\(handlers)")
        }
        parts.append("pf\(machine.producerFinished)\(machine.reportedYieldAfterFinish)")
        parts.append(
            "x\(taskCancelled)\(machine.cancellationUnreported)\(sawCancellation)\(failureStored)"
        )
        switch consumer {
        case .suspended: parts.append("suspended")
        case .handed(let element): parts.append("handed\(live.sorted().firstIndex(of: element) ?? -1)")
        default: parts.append("\(consumer)")
        }
        parts.append(
            "e\(consumerEnds)f\(finishes)r\(sinkReleased)b\(builderRan)u\(builderReleasedUnrun)t\(probe.teardowns.count)j\(actorJobPending)q\(queuedTeardown != nil)\(queueHoldsTheTeardown)\(queuedReports?.count ?? -1)\(reportsReturnPending)\(restarted)\(cancelDecided)"
        )
        parts.append(
            "\(afterKey)\(firstEnd ?? "-")\(String(describing: endSeen))hs\(handlerStored)d\(discardedByTheConsumer > 0)"
        )
        parts.append(senders.map { "\($0.pc)\($0.cancels)" }.joined(separator: ","))
        return parts.joined(separator: "|")
    }

    var afterKey: String {
        switch teardownInFlight {
        case nil: "none"
        case .consumerLoops: "loops"
        case .consumerTerminated(let waitingSenders): "terminated(\(waitingSenders.count))"
        case .nothing: "nothing"
        case .resume(let waitingConsumer, let end, let waitingSenders, let result):
            "resume(\(waitingConsumer != nil),\(end != nil),\(waitingSenders.count),\(result))"
        }
    }

    var teardownCase: String {
        switch machine.teardown {
        case .unstarted: "unstarted"
        case .notYetReturned: "notYetReturned"
        case .held: "held"
        case .runWhenReturned(let termination, _): "runWhenReturned(\(termination))"
        case .enqueued(_, let termination): "enqueued(\(termination))"
        case .running: "running"
        case .spent: "spent"
        }
    }
}

extension CallbackStreamStateMachine.YieldAction {
    fileprivate var isTerminated: Bool {
        if case .terminated = self { true } else { false }
    }
}

extension StreamModel.Event {
    /// Events that end the stream resume every waiting sender at once.
    var endsTheStream: Bool {
        switch self {
        // A cancellation handler (when the task is cancelled, or as `suspend` installs it in a
        // cancelled task) ends it too.
        case .finish, .releaseSink, .consumerEnds, .teardownReturns, .next, .afterNilWakeup, .cancelTask, .suspend: true
        default: false
        }
    }
}

extension CallbackStreamStateMachine {
    fileprivate var phaseIsStreaming: Bool {
        if case .streaming = phase { true } else { false }
    }
}
