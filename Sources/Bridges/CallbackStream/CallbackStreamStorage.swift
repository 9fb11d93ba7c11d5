/// Lock + ``CallbackStreamStateMachine`` + acting on its actions.
///
/// Every method takes the lock only to run one event of the state machine; continuations are
/// resumed, the teardown run and `onDrop`/demand handlers called after the lock is released.
@usableFromInline
struct CallbackStreamStorage<Element, Failure: Error>: Sendable {
    @usableFromInline typealias Machine = CallbackStreamStateMachine<Element, Failure, CallbackStream<Element, Failure>.Builder>
    @usableFromInline typealias Delivery = Machine.Delivery

    @usableFromInline let state: LockedState<Machine>

    @inlinable
    init(policy: BufferingPolicy, builder: @escaping CallbackStream<Element, Failure>.Builder) {
        state = .create(Machine(policy: policy, builder: builder))
    }

    // MARK: Consumer side

    /// Ends the iteration from the consumer's side (its task was cancelled or its iterator released).
    @inlinable
    func terminateConsumer() {
        guard case .terminate(let builder, let consumer, let senders, let teardown, let discarded, let demand) =
            state.withLock({ $0.consumerTerminated() })
        else { return }
        consumer?.resume(returning: Delivery(.success(nil)))
        for sender in senders { sender.continuation.resume(returning: Handoff(.terminated)) }
        teardown?.cancel()
        withExtendedLifetime((builder, discarded, demand)) {}  // released here, outside the lock
    }

    @inlinable
    func runBuilder(
        _ builder: CallbackStream<Element, Failure>.Builder,
        onDrop: (@Sendable (Element) -> Void)?,
        site: CallSite
    ) {
        let teardown = builder(CallbackStream<Element, Failure>.Sink(SinkToken(self, onDrop: onDrop, site: site)))
        state.withLock { $0.builderReturned(teardown) }?.cancel()
    }

    @inlinable
    func suspend(
        isolation actor: isolated (any Actor)?,
        site: CallSite
    ) async -> Delivery {
        await withTaskCancellationHandler {
            await withUnsafeContinuation(isolation: actor) { (continuation: Machine.Consumer) in
                switch state.withLock({ $0.suspend(continuation) }) {
                case .suspended(let demand):
                    demand?(1)
                case .resume(let continuation, let delivery, let sender):
                    sender?.resume(returning: Handoff(.enqueued))
                    continuation.resume(returning: delivery)
                case .concurrentIteration(let continuation):
                    site.report(
                        .concurrentIteration,
                        "next() was called on a CallbackStream iterator while another task was suspended in next(); an iterator must be used by one task at a time. The second call returns nil.",
                        bridge: state.storage
                    )
                    continuation.resume(returning: Delivery(.success(nil)))
                }
            }
        } onCancel: {
            terminateConsumer()
        }
    }

    // MARK: Producer side

    @inlinable
    func act(_ action: Machine.YieldAction, onDrop: (@Sendable (Element) -> Void)?, site: CallSite) -> Machine.YieldResult {
        switch action {
        case .resumeConsumer(let consumer, let element, let demand, let result):
            consumer.resume(returning: Delivery(.success(element), demand: demand))
            return result
        case .answer(let result):
            return result
        case .dropped(let element):
            onDrop?(element)
            return .dropped(element)
        case .terminated(let report):
            if report {
                site.report(.yieldAfterFinish, "an element was yielded after the producer had finished the stream; it was discarded", bridge: state.storage)
            }
            return .terminated
        }
    }

    @inlinable
    func send(
        _ element: Element,
        onDrop: (@Sendable (Element) -> Void)?,
        site: CallSite,
        isolation: isolated (any Actor)?
    ) async -> Machine.YieldResult {
        let pending: Element
        let id: UInt64
        switch state.withLock({ $0.trySend(element) }) {
        case .done(let action):
            return act(action, onDrop: onDrop, site: site)
        case .mustWait(let element, let senderID):
            (pending, id) = (element, senderID)
        }
        let handoff = await withTaskCancellationHandler {
            await withUnsafeContinuation(isolation: isolation) { (continuation: Machine.SenderContinuation) in
                switch state.withLock({ $0.enqueueSender(pending, id: id, continuation) }) {
                case .suspended:
                    if Task.isCancelled { cancelSender(id: id) }  // cancelled before it was enqueued
                case .resumeNow(let continuation, let action):
                    continuation.resume(returning: Handoff(act(action, onDrop: onDrop, site: site)))
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
    func finish(_ failure: Failure?, site: CallSite) {
        act(state.withLock { $0.finish(failure) }, site: site)
    }

    @usableFromInline
    func producerReleased(site: CallSite) {
        guard let action = state.withLock({ $0.producerReleased() }) else { return }
        site.report(
            .sinkDropped,
            "the producer released every copy of the CallbackStream's sink without calling finish(); the stream finishes so that its consumer does not wait forever",
            bridge: nil  // once per stream by construction, and reported from the sink's deinit
        )
        act(action, site: site)
    }

    @inlinable
    func act(_ action: Machine.FinishAction, site: CallSite) {
        switch action {
        case .none:
            break
        case .reportFinishAfterFinish:
            site.report(.finishCalledTwice, "finish() was called on a CallbackStream sink that had already finished; the call was ignored", bridge: state.storage)
        case .finish(let consumer, let failure, let senders, let teardown, let demand):
            consumer?.resume(returning: Delivery(failure.map { .failure($0) } ?? .success(nil)))
            for sender in senders { sender.resume(returning: Handoff(.enqueued)) }
            teardown?.cancel()
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
@usableFromInline
final class ConsumerToken<Element, Failure: Error> {
    @usableFromInline let storage: CallbackStreamStorage<Element, Failure>
    @usableFromInline let onDrop: (@Sendable (Element) -> Void)?
    @usableFromInline let site: CallSite

    @inlinable
    init(_ storage: CallbackStreamStorage<Element, Failure>, onDrop: (@Sendable (Element) -> Void)?, site: CallSite) {
        self.storage = storage
        self.onDrop = onDrop
        self.site = site
    }

    @inlinable
    deinit { storage.terminateConsumer() }
}

/// Shared by every copy of one iteration's ``CallbackStream/Sink``: when the last copy is
/// released without `finish()`, the stream finishes (and reports it) instead of leaving its
/// consumer suspended forever.
@usableFromInline
final class SinkToken<Element, Failure: Error>: Sendable {
    @usableFromInline let storage: CallbackStreamStorage<Element, Failure>
    @usableFromInline let onDrop: (@Sendable (Element) -> Void)?
    @usableFromInline let site: CallSite

    @inlinable
    init(_ storage: CallbackStreamStorage<Element, Failure>, onDrop: (@Sendable (Element) -> Void)?, site: CallSite) {
        self.storage = storage
        self.onDrop = onDrop
        self.site = site
    }

    @inlinable
    deinit { storage.producerReleased(site: site) }
}
