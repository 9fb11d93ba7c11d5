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

    /// Ends the iteration from the consumer's side: from the consumer's own task once it saw its
    /// cancellation (never from the task's cancellation handler: see `cancelConsumer()`), or
    /// from the iterator's release. The teardown runs first, so the consumer's loop ends after
    /// it; if another thread is running it, the consumer stays suspended until that thread's
    /// `teardownReturned()`.
    @inlinable
    func terminateConsumer(cancelled: Bool) {
        guard
            case .terminate(let builder, let consumer, let senders, let teardown, var discarded, let demand) =
                state.withLock({ $0.consumerTerminated(cancelled: cancelled) })
        else { return }
        runTeardown(teardown)
        consumer?.resume(returning: Wakeup(.success(nil)))
        for sender in senders { sender.continuation?.resume(returning: Handoff(.terminated)) }
        if let undelivered = self.undelivered {
            while let element = discarded?.popFirst() { undelivered(element, .cancelled) }
            for sender in senders { undelivered(sender.element, .cancelled) }
        }
        withExtendedLifetime((builder, discarded, demand)) {}  // released here, outside the lock
    }

    /// Runs a teardown taken from the state machine, then tells it the teardown returned (which
    /// resumes a consumer that was waiting for the end).
    @inlinable
    func runTeardown(_ work: (Machine.Teardown, Machine.Termination)?) {
        guard let (teardown, termination) = work else { return }
        teardown.run(termination)
        if let (consumer, failure) = state.withLock({ $0.teardownReturned() }) {
            consumer.resume(returning: Wakeup(failure.map { .failure($0) } ?? .success(nil)))
        }
    }

    /// Runs the builder in its own isolation (the actor it was written in, or none), awaited
    /// by the consumer's first `next()`.
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
        runTeardown(state.withLock { $0.builderReturned(teardown) })
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

    /// The consumer's cancellation handler: resumes the suspended consumer with nil and does
    /// nothing else. The consumer ends the stream from its own task (`terminateConsumer`), so a
    /// teardown that waits, for a reader thread or a handler in progress on another thread,
    /// never waits inside the handler: a thread resuming this task meanwhile would wait for
    /// the handler to return, and `Task.cancel()` would never return.
    @inlinable
    func cancelConsumer() {
        state.withLock { $0.consumerCancelled() }?.resume(returning: Wakeup(.success(nil)))
    }

    // MARK: Producer side

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
        // A throwing stream ends with the cause, never as if the source had completed.
        let lost = BridgeError.sinkDropped as? Failure
        guard let action = state.withLock({ $0.producerReleased(lostProducer: lost) }) else { return }
        site.report(
            .sinkDropped,
            "the producer released every copy of the CallbackStream's sink without calling finish(); the stream "
                + "ended (a throwing one with BridgeError.sinkDropped) so that its consumer does not wait forever. Keep the sink for as long as the source can "
                + "produce (in the delegate proxy or the callback the source retains) and call finish() or "
                + "finish(throwing:) when the source ends.",
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
        case .finish(let consumer, let failure, let senders, let teardown, let demand):
            // The teardown first: a consumer whose loop ends here must find it done.
            runTeardown(teardown)
            consumer?.resume(returning: Wakeup(failure.map { .failure($0) } ?? .success(nil)))
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
    deinit { storage.terminateConsumer(cancelled: false) }
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
