/// Lock + ``CallbackStreamStateMachine`` + acting on its actions.
///
/// Every method takes the lock only to run one event of the state machine; continuations are
/// resumed, the teardown run and `onDrop`/demand handlers called after the lock is released.
@usableFromInline
struct CallbackStreamStorage<Element, Failure: Error>: Sendable {
    @usableFromInline typealias Machine = CallbackStreamStateMachine<
        Element, Failure, CallbackStream<Element, Failure>.AnyBuilder
    >
    @usableFromInline typealias Wakeup = Machine.Wakeup
    @usableFromInline typealias Undelivered = CallbackStream<Element, Failure>.UndeliveredHandler

    @usableFromInline let state: LockedState<Machine>

    @inlinable
    init(
        policy: BufferingPolicy,
        builder: CallbackStream<Element, Failure>.AnyBuilder,
        undelivered: Undelivered?,
        site: CallSite
    ) {
        state = LockedState(Machine(policy: policy, builder: builder, undelivered: undelivered, site: site))
    }

    /// The stream's `onDrop`/`onUndelivered` handler: a `let` of the state, read without the lock.
    @inlinable var undelivered: Undelivered? { state.readConstant { $0.pointee.undelivered } }

    /// Where the stream was made: a `let` of the state, read without the lock.
    @inlinable var site: CallSite { state.readConstant { $0.pointee.site } }

    // MARK: Consumer side

    /// Ends the iteration from the consumer's side, in the consumer's own task, on the actor it
    /// iterates on: its `next()` saw the task cancelled, or its iterator was released (at the end
    /// of a `for await` on that actor; an iterator advanced there cannot be sent elsewhere). A
    /// teardown the consumer may run (nonisolated, or written on its actor) runs here, first, so
    /// its loop ends after it; one written on another actor is enqueued there.
    @inlinable
    func terminateConsumer(cancelled: Bool) {
        act(state.withLock { $0.consumerTerminated(cancelled: cancelled) })
    }

    /// The iterator was released: the consumer ends the stream, as `terminateConsumer` does, where
    /// it is released. A `for await` releases it on the actor it iterates on; one released
    /// elsewhere does not run a main-actor teardown there (see `consumerTerminated`).
    @usableFromInline
    func iteratorReleased() {
        let offTheMainQueue = !MainQueue.isCurrent
        act(state.withLock { $0.consumerTerminated(cancelled: false, offTheMainQueue: offTheMainQueue) })
    }

    /// The consumer's cancellation handler, on the cancelling thread: decides the end now (yields
    /// answer `.terminated` from here on, and the teardown learns `.cancelled`, whatever the
    /// producer does next), resumes waiting senders, and hands everything that runs user code or
    /// may wait to the teardown queue or to the teardown's actor: a teardown that waits (for a
    /// reader thread that may be resuming this very task) must never run inside the handler,
    /// where `Task.cancel()` would wait for it, and must not wait for the consumer's task to be
    /// scheduled either. The consumer stays suspended until the teardown returned.
    @usableFromInline
    func cancelConsumer() {
        guard
            case .terminate(let builder, let consumer, let senders, let teardown, let discarded, let demand) =
                state.withLock({ $0.consumerCancelled() })
        else { return }
        for sender in senders { sender.continuation?.resume(returning: Handoff(.terminated)) }
        consumer?.resume(returning: Wakeup(.success(nil)))
        var runOnQueue: (Machine.Teardown, Machine.Termination)?
        switch teardown {
        case .runOnQueue(let held, let termination)?: runOnQueue = (held, termination)
        case .enqueue(let held)?: enqueueTeardown(on: held, inCancellationHandler: true)
        case .runHere?: preconditionFailure("Internal inconsistency: a teardown to run in a cancellation handler")
        case nil: break
        }
        let undelivered = self.undelivered
        // The machine marked these reports in flight (`reportsInFlight`) exactly when it handed
        // something out to report.
        let reports = discarded != nil || !senders.isEmpty
        // Moved to the queue's one work item, never shared: the state machine handed them out.
        let rest = Handoff((builder, senders, discarded, demand, runOnQueue))
        TeardownQueue.async {
            let (builder, senders, discarded, demand, runOnQueue) = rest.value
            // The reports before the returns, which resume the parked consumer: its loop ends
            // after the teardown, with every element accounted for.
            if let (held, termination) = runOnQueue { held.runHere(termination) }
            report(discarded, senders, to: undelivered)
            withExtendedLifetime((builder, senders, discarded, demand)) {}
            if runOnQueue != nil { teardownFinished() }
            if reports { reportsFinished() }
        }
    }

    /// Acts on the consumer's own termination (`terminateConsumer`), outside the lock.
    @inlinable
    func act(_ action: Machine.TerminateAction) {
        guard case .terminate(let builder, let consumer, let senders, let teardown, let discarded, let demand) = action
        else { return }
        if let teardown { perform(teardown) }
        consumer?.resume(returning: Wakeup(.success(nil)))
        for sender in senders { sender.continuation?.resume(returning: Handoff(.terminated)) }
        report(discarded, senders, to: undelivered)
        withExtendedLifetime((builder, discarded, demand)) {}  // released here, outside the lock
    }

    /// The consumer was handed `element` and its task is cancelled by the time it runs: returns
    /// true if the element is undelivered (the cancellation ended the stream; reported here), and
    /// ends the stream here if its cancellation handler has not yet.
    @usableFromInline
    func revokeHandedElement(_ element: Element) -> Bool {
        let (revoked, action) = state.withLock { $0.handedElementWhileCancelled() }
        act(action)
        if revoked { undelivered?(element, .cancelled) }
        return revoked
    }

    /// Reports the elements a consumer's end discarded (buffered, then those of waiting senders).
    @inlinable
    func report(_ discarded: StreamRing<Element>?, _ senders: [Machine.Sender], to undelivered: Undelivered?) {
        guard let undelivered else { return }
        var discarded = discarded
        while let element = discarded?.popFirst() { undelivered(element, .cancelled) }
        for sender in senders { undelivered(sender.element, .cancelled) }
    }

    /// Does what the thread that took a teardown must do with it (see `TeardownWork`).
    @usableFromInline
    func perform(_ work: Machine.TeardownWork) {
        switch work {
        case .runHere(let teardown, let termination):
            runTeardownHere(teardown, termination)
        case .runOnQueue(let teardown, let termination):
            let work = Handoff((teardown, termination))  // moved to the queue, run once there
            TeardownQueue.async { runTeardownHere(work.value.0, work.value.1) }
        case .enqueue(let teardown):
            enqueueTeardown(on: teardown)
        }
    }

    /// Runs a teardown taken from the state machine on this thread (where it may run), then tells
    /// the machine it returned, which resumes a consumer that was waiting for the end.
    @inlinable
    func runTeardownHere(_ teardown: Machine.Teardown, _ termination: Machine.Termination) {
        teardown.runHere(termination)
        teardownFinished()
    }

    /// Tells the machine the teardown returned, and resumes a consumer that waited for it.
    @inlinable
    func teardownFinished() {
        if let (consumer, failure) = state.withLock({ $0.teardownReturned() }) {
            consumer.resume(returning: Wakeup(failure.map { .failure($0) } ?? .success(nil)))
        }
    }

    /// Tells the machine the cancellation's reports were made, and resumes a consumer that
    /// waited for them.
    @usableFromInline
    func reportsFinished() {
        if let (consumer, failure) = state.withLock({ $0.reportsReturned() }) {
            consumer.resume(returning: Wakeup(failure.map { .failure($0) } ?? .success(nil)))
        }
    }

    /// Enqueues a job on the actor `teardown` was written on, which runs it there unless someone
    /// on that actor (the consumer, a builder) ran it first.
    @usableFromInline
    func enqueueTeardown(on teardown: Machine.Teardown, inCancellationHandler: Bool = false) {
        guard let actor = teardown.isolation else {
            // A Cancellation its holder already cancelled: nothing of it left to run, but what
            // the teardown keeps (delegate proxies) is released there, never in a handler.
            if inCancellationHandler { TeardownQueue.async { runEnqueuedTeardown() } } else { runEnqueuedTeardown() }
            return
        }
        ActorTeardowns.enqueue(on: actor) { runEnqueuedTeardown() }
    }

    /// On the teardown's actor: runs the enqueued teardown, if nobody has.
    @usableFromInline
    func runEnqueuedTeardown() {
        guard let (teardown, termination) = state.withLock({ $0.takeEnqueuedTeardown() }) else { return }
        runTeardownHere(teardown, termination)
    }

    /// Runs the builder in its own isolation (the actor it was written in, or none), awaited
    /// by the consumer's first `next()`, on the consumer's actor `actor`.
    @inlinable
    func runBuilder(
        _ builder: CallbackStream<Element, Failure>.AnyBuilder, isolation actor: isolated (any Actor)?
    ) async {
        let sink = CallbackStream<Element, Failure>.Sink(SinkToken(self))
        let teardown: CallbackStream<Element, Failure>.Teardown
        switch builder {
        case .synchronous(let build): teardown = build(sink)
        case .isolated(let build): teardown = await build(sink, actor)
        }
        let place: Machine.TeardownPlace
        if let teardownActor = teardown.isolation {
            if teardownActor === actor {
                place = teardownActor === MainActor.shared ? .consumersMainActor : .consumersActor
            } else {
                place = .otherActor
            }
        } else {
            place = .anywhere
        }
        if let work = state.withLock({ $0.builderReturned(teardown, place: place) }) { perform(work) }
    }

    /// Keeps `object` alive until the teardown has run (see `Sink.keepUntilTeardown`).
    @usableFromInline
    func keepUntilTeardown(_ object: AnyObject) {
        _ = state.withLock { $0.keepUntilTeardown(object) }
    }

    @inlinable
    func suspend(isolation actor: isolated (any Actor)?) async -> Wakeup {
        await withTaskCancellationHandler {
            await withUnsafeContinuation(isolation: actor) { (continuation: Machine.Consumer) in
                switch state.withLock({ $0.suspend(continuation) }) {
                case .suspended(let demand):
                    demand?.report()
                case .resume(let continuation, let wakeUp, let sender):
                    sender?.resume(returning: Handoff(.enqueued))
                    continuation.resume(returning: wakeUp)
                case .concurrentIteration(let continuation):
                    site.report(
                        .concurrentIteration,
                        "next() was called on a CallbackStream iterator while another task was suspended in next(); an iterator must be used by one task at a time. The second call returns nil.",
                        bridge: state.storage
                    )
                    continuation.resume(returning: Wakeup(.success(nil)))
                }
            }
        } onCancel: {
            cancelConsumer()
        }
    }

    /// The consumer's door: `next()`'s events, each decided under the lock; the iterator acts
    /// on the answer after it is released.
    @inlinable
    func decideNext() -> Machine.NextAction { state.withLock { $0.next() } }

    @inlinable
    func decideNextAskingBeforeSuspending() -> Machine.NextAction {
        state.withLock { $0.nextAskingBeforeSuspending() }
    }

    /// A buffered element to return at once, or `next()`'s action (asking a rendezvous pull
    /// source for its element under the same lock): one lock pair.
    @inlinable @inline(__always)
    func decideTakeBufferedOrNext() -> Machine.NextAction {
        state.withLock { machine in
            if let element = machine.takeBuffered() { return .element(element, sender: nil, demand: nil) }
            return machine.nextAskingBeforeSuspending()
        }
    }

    /// The suspended consumer was resumed with nil: the end, or the cancellation that resumed it.
    @inlinable
    func decideWokenWithNil() -> Machine.NilWakeupAction { state.withLock { $0.wokenWithNil() } }

    // MARK: Producer side

    /// Decides a yield of `element`, under the lock only: the one door through which every
    /// producer (a sink, a broadcast's or an operator's fan-out) puts an element in the stream.
    /// The common case is decided inline, without the general event: under `.unbounded`, while
    /// streaming with no consumer waiting, the element joins the buffer and needs no action.
    @inlinable @inline(__always)
    func decideYield(_ element: Element) -> Machine.YieldAction {
        state.withLock { machine in
            if machine.yieldOnlyBuffers {
                machine.buffer.append(element, initialCapacity: Machine.initialBufferCapacity, maximumCapacity: .max)
                return .answer(.enqueued)
            }
            return machine.yield(element)
        }
    }

    /// ``decideYield(_:)`` for a source that must send only the demand the stream reported (a
    /// Combine publisher): also says whether the element was within that demand, from the one
    /// count the stream keeps, under the same lock. Before any demand handler was registered
    /// nothing was asked for: `.beforeDemand` (the element is still decided: nothing is lost).
    @inlinable @inline(__always)
    func decideYieldWithinDemand(_ element: Element) -> (Machine.YieldAction, DemandedYield) {
        state.withLock { machine in
            let verdict: DemandedYield =
                !machine.demandRegistered ? .beforeDemand : machine.yieldIsDemanded ? .accepted : .beyondDemand
            if machine.yieldOnlyBuffers {  // .unbounded
                machine.buffer.append(element, initialCapacity: Machine.initialBufferCapacity, maximumCapacity: .max)
                return (.answer(.enqueued), verdict)
            }
            return (machine.yield(element), verdict)
        }
    }

    /// Decides the end of the stream by a fan-out (a broadcast's or an operator's finish), under
    /// the lock only; act on it with `act(_:fileID:line:)` once every lock is released.
    @inlinable
    func decideFinish(_ failure: Failure?) -> Machine.FinishAction {
        state.withLock { $0.finish(failure) }
    }

    /// Whether the stream is over (finished by the producer, or ended by the consumer).
    @inlinable var isTerminated: Bool { state.withLock { $0.isTerminated } }

    /// How many elements the policy has dropped so far.
    @inlinable var droppedCount: Int { state.withLock { $0.droppedCount } }

    /// Acts on a fan-out's yield decision (see `Outbox`), outside every lock. An element handed
    /// straight to a waiting consumer frees its room at once: that demand is reported here, by
    /// the producer, rather than by the consumer once its task runs, so a producer held back by
    /// this stream (a broadcast's sender, a shared upstream's pulling task) goes on without
    /// waiting for the consumer to be scheduled.
    @inlinable
    func actOnFanOut(_ action: Machine.YieldAction) {
        if case .resumeConsumer(let consumer, let element, let demand?, _) = action {
            consumer.resume(returning: Wakeup(.success(element)))
            demand.report()
            return
        }
        _ = act(action, fileID: #fileID, line: #line)
    }

    /// Acts on a yield's (or a send's) decision, outside the lock. Reads the handler and the call
    /// site only on the paths that use them (a computed read copies them: a dropped element would
    /// pay a retain and a release of the call site's string and handler for a report it does not make).
    /// `fileID`/`line` are the yield's own call site, reported with a yield after finish.
    @inlinable
    func act(_ action: Machine.YieldAction, fileID: String, line: UInt) -> Machine.YieldResult {
        switch action {
        case .resumeConsumer(let consumer, let element, let demand, let result):
            consumer.resume(returning: Wakeup(.success(element), demand: demand))
            return result
        case .answer(let result):
            return result
        case .dropped(let element):
            undelivered?(element, .dropped)
            return .dropped(element)
        case .terminated(let element, let report):
            if report { reportYieldAfterFinish(fileID: fileID, line: line) }
            undelivered?(element, .terminated)
            return .terminated
        }
    }

    /// Out of line: the message is built only on this misuse path, never in the inlined `yield`.
    @usableFromInline @inline(never)
    func reportYieldAfterFinish(fileID: String, line: UInt) {
        site.report(
            .yieldAfterFinish,
            "an element was yielded after the producer had finished the stream (made at \(site.fileID):\(site.line)); "
                + "it was discarded. Stop producing once you call finish(): unregister the callback or delegate "
                + "before finishing, or stop when yield answers .terminated.",
            bridge: state.storage, at: fileID, line: line
        )
    }

    @inlinable
    func send(
        _ element: Element,
        isolation: isolated (any Actor)?,
        fileID: String,
        line: UInt
    ) async -> Machine.YieldResult {
        let pending: Element
        let id: UInt64
        switch state.withLock({ $0.trySend(element) }) {
        case .done(let action):
            return act(action, fileID: fileID, line: line)
        case .mustWait(let element, let senderID):
            (pending, id) = (element, senderID)
        }
        let handoff = await withTaskCancellationHandler {
            await withUnsafeContinuation(isolation: isolation) { (continuation: Machine.SenderContinuation) in
                switch state.withLock({ $0.enqueueSender(pending, id: id, continuation) }) {
                case .suspended:
                    if Task.isCancelled { cancelSender(id: id) }  // cancelled before it was enqueued
                case .resumeNow(let continuation, let action):
                    continuation.resume(returning: Handoff(act(action, fileID: fileID, line: line)))
                }
            }
        } onCancel: {
            cancelSender(id: id)
        }
        return handoff.value
    }

    @inlinable
    func cancelSender(id: UInt64) {
        state.withLock { $0.cancelSender(id: id) }?.resume(returning: Handoff(.stopProducing))
    }

    @inlinable
    func finish(_ failure: Failure?, fileID: String, line: UInt) {
        act(state.withLock { $0.finish(failure) }, fileID: fileID, line: line)
    }

    @usableFromInline
    func producerReleased() {
        // A stream that can say it ends with the cause, never as if the source had completed.
        let lost = BridgeError.sinkDropped.asFailure(Failure.self)
        guard let action = state.withLock({ $0.producerReleased(lostProducer: lost) }) else { return }
        let ending =
            lost != nil
            ? "the stream ended with \(lost!) so that its consumer does not wait forever"
            : Failure.self == Never.self
                ? "the stream finished so that its consumer does not wait forever (a stream that cannot fail ends with nil)"
                : "the stream ended with nil, as if complete, because \(Failure.self) cannot carry BridgeError.sinkDropped: "
                    + "conform \(Failure.self) to BridgeErrorConvertible so that its loop throws instead"
        site.report(
            .sinkDropped,
            "the producer released every copy of the CallbackStream's sink without calling finish(); \(ending). "
                + "Keep the sink for as long as the source can produce (in the delegate proxy or the callback the "
                + "source retains) and call finish() or finish(throwing:) when the source ends.",
            bridge: nil  // once per stream by construction, and reported from the sink's deinit
        )
        act(action, fileID: site.fileID, line: site.line)
    }

    /// Acts on a finish's decision, outside the lock; `fileID`/`line` are the finish's own call
    /// site, where a misuse is reported.
    @inlinable
    func act(_ action: Machine.FinishAction, fileID: String, line: UInt) {
        switch action {
        case .none:
            break
        case .reportFinishAfterFinish(let failure):
            // An error passed now reaches nobody: the message carries it, so it is not swallowed.
            let call = failure.map { "finish(throwing: \($0))" } ?? "finish()"
            site.report(
                .finishCalledTwice,
                "\(call) was called on a CallbackStream sink that had already finished (the stream was made at "
                    + "\(site.fileID):\(site.line)); the call was ignored. Finish once, where the source ends (its "
                    + "completion or failure callback), not also from the teardown or a second callback.",
                bridge: state.storage, at: fileID, line: line
            )
        case .reportFailureAfterEnd(let failure):
            site.report(
                .yieldAfterFinish,
                "finish(throwing:) was called after the consumer had ended the stream (cancelled, broke out or dropped "
                    + "its iterator; the stream was made at \(site.fileID):\(site.line)); the error reached nobody: "
                    + "\(failure). Log the error where it happens if it matters after the consumer left; the teardown "
                    + "given as .onTermination learns .cancelled when the consumer ended first.",
                bridge: state.storage, at: fileID, line: line
            )
        case .finish(let senders, let teardown, let demand):
            // The teardown's return resumes a consumer waiting for the end: its loop ends after it.
            if let teardown { perform(teardown) }
            for sender in senders { sender.resume(returning: Handoff(.enqueued)) }
            withExtendedLifetime(demand) {}  // released here, outside the lock
        }
    }

    @inlinable
    func onDemand(_ handler: @escaping @Sendable (Int) -> Void) {
        let (initial, replaced) = state.withLock { $0.registerDemand(handler) }
        withExtendedLifetime(replaced) {}  // the old handler's captures are released outside the lock
        if let initial { handler(initial) }
    }
}

/// Held by the iterator only: when it is released, the consumer has gone away (it broke out of
/// its loop or dropped the iterator), which ends the iteration and runs the teardown.
///
/// The producer's sink references the storage too, so the storage's own deinit cannot tell.
/// One reference and nothing else (the handler and call site are read from the storage): every
/// started stream has one.
@usableFromInline
final class ConsumerToken<Element, Failure: Error> {
    @usableFromInline let storage: CallbackStreamStorage<Element, Failure>

    @inlinable
    init(_ storage: CallbackStreamStorage<Element, Failure>) { self.storage = storage }

    @inlinable
    deinit { storage.iteratorReleased() }
}

/// Shared by every copy of one iteration's ``CallbackStream/Sink``: when the last copy is
/// released without `finish()`, the stream finishes (and reports it) instead of leaving its
/// consumer suspended forever. One reference, like ``ConsumerToken``.
@usableFromInline
final class SinkToken<Element, Failure: Error>: Sendable {
    @usableFromInline let storage: CallbackStreamStorage<Element, Failure>

    @inlinable
    init(_ storage: CallbackStreamStorage<Element, Failure>) { self.storage = storage }

    @inlinable
    deinit { storage.producerReleased() }
}
