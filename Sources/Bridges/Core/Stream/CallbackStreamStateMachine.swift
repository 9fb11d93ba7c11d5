/// The state of one iteration of a ``CallbackStream``: a pure value, no locks, nothing resumed.
///
/// ``CallbackStreamStorage`` takes its lock, runs one `mutating` event here, releases the lock
/// and then performs the returned action (resumes continuations, runs the teardown, calls
/// `onDrop` and demand handlers). Exactly-once is structural: the builder, the teardown and
/// every continuation are moved out of the state by the event that uses them, so no second path
/// can find them.
///
/// One machine serves one iterator (streams are cold: every iterator has its own producer), so
/// there is at most one consumer; any number of producer threads may yield and send.
@usableFromInline
struct CallbackStreamStateMachine<Element, Failure: Error, Builder> {
    @usableFromInline typealias YieldResult = CallbackStream<Element, Failure>.YieldResult
    @usableFromInline typealias Consumer = UnsafeContinuation<Wakeup, Never>
    /// The result moves from the thread that resumes a sender to the task it resumes, once.
    @usableFromInline typealias SenderContinuation = UnsafeContinuation<Handoff<YieldResult>, Never>
    @usableFromInline typealias DemandHandler = @Sendable (Int) -> Void
    @usableFromInline typealias Teardown = CallbackStream<Element, Failure>.Teardown
    @usableFromInline typealias Termination = CallbackStream<Element, Failure>.Termination

    @usableFromInline
    enum Mode { case unbounded, dropNewest, dropOldest, waiting }

    /// What a suspended consumer is resumed with (`@unchecked Sendable`: see the extension below):
    /// the element or the end, and (under `.suspending(n)`) the demand the consumer reports once it
    /// has taken the element.
    @usableFromInline
    struct Wakeup {
        @usableFromInline let result: Result<Element?, Failure>
        @usableFromInline let demand: Demand?

        @inlinable
        init(_ result: Result<Element?, Failure>, demand: Demand? = nil) {
            self.result = result
            self.demand = demand
        }
    }

    @usableFromInline
    enum Phase {
        /// Entered at creation (`makeAsyncIterator`). Nothing has run; the builder waits in
        /// `teardown` (`.unstarted`). Left by the first `next()` (→ streaming, the builder runs)
        /// or by the consumer going away or being cancelled (→ terminated; the builder is
        /// released without running, so there is no teardown).
        case idle
        /// The builder ran (or is running) and the producer may yield. Left when the producer
        /// finishes (→ finished) or when the consumer goes away or is cancelled (→ terminated).
        case streaming
        /// The producer finished; the teardown runs (or runs as soon as the builder returns it).
        /// The consumer drains the buffer, then receives the failure or `nil` (→ terminated) once
        /// the teardown has *returned* (until then it waits, so code after its loop always sees
        /// the teardown done), unless it goes away or is cancelled first (→ terminated).
        case finished(Failure?)
        /// Terminal: the consumer saw the end, went away or was cancelled (decided in its task's
        /// cancellation handler when it was waiting in `next()`, else by its next `next()`).
        /// Yields answer `.terminated`, a `finish` changes nothing. While the teardown is in
        /// flight (`.running`, `.enqueued`), a consumer that suspends, or was suspended, stays in
        /// `consumer` until `teardownReturned()` resumes it, so its loop ends after the teardown.
        /// The payload is a failure the producer stored before the consumer was cancelled and
        /// that the consumer has not been told yet: the stream ended as it ended, so its next
        /// `next()` throws it (once) rather than `CancellationError` or `nil`.
        case terminated(unreported: Failure?)
    }

    // Laid out widest first; the one-byte fields follow `buffer`, in its inline slot's padding.
    // This struct is most of a started stream's memory: `CallbackStreamLayoutTests` holds the
    // `Int` stream's state to the size class it was made to fit.
    @usableFromInline let capacity: Int
    /// Non-nil exactly under the waiting policies (`mode == .waiting`).
    @usableFromInline let waiting: Waiting?
    /// The consumer suspended in `next()`: while streaming with nothing buffered, or waiting for
    /// the end until the teardown returns.
    @usableFromInline var consumer: Consumer?
    @usableFromInline var droppedCount = 0
    /// The stream's `onDrop`/`onUndelivered`, and where it was made (for diagnostics). Never
    /// change: read without the lock (``CallbackStreamStorage/undelivered``), and stored here
    /// once rather than in each token.
    @usableFromInline let undelivered: CallbackStream<Element, Failure>.UndeliveredHandler?
    @usableFromInline let site: CallSite
    /// Elements not yet taken. Under waiting policies a synchronous yield may overfill it.
    /// Append through `enqueue(_:)`, which knows how far the policy lets it grow.
    @usableFromInline var buffer = StreamRing<Element>()
    @usableFromInline var phase: Phase
    @usableFromInline let mode: Mode
    /// The producer called `finish` (or released its sink): later yields are misuse.
    @usableFromInline var producerFinished = false
    /// Rarely written facts, in one byte (the inline slot's padding has no room for another
    /// field): see ``reportedYieldAfterFinish``, ``demandRegistered``, ``teardownPlace`` and
    /// ``reportsInFlight``.
    @usableFromInline var marks: UInt8 = 0
    /// The consumer's task was cancelled before the stream ended, and the consumer has not been
    /// told yet: its `next()` ends with `.cancelled` (a throwing stream throws
    /// `CancellationError`) once, then with `nil` like any ended stream.
    @usableFromInline var cancellationUnreported = false
    @usableFromInline var teardown: TeardownState

    /// The bits of ``marks``.
    @inlinable static var reportedYieldAfterFinishMark: UInt8 { 1 }
    @inlinable static var demandRegisteredMark: UInt8 { 2 }
    /// Two bits: the ``TeardownPlace``.
    @inlinable static var teardownPlaceShift: UInt8 { 2 }
    @inlinable static var reportsInFlightMark: UInt8 { 16 }

    @inlinable
    init(
        policy: BufferingPolicy,
        builder: Builder,
        undelivered: CallbackStream<Element, Failure>.UndeliveredHandler? = nil,
        site: CallSite = CallSite(fileID: #fileID, line: #line)
    ) {
        self.undelivered = undelivered
        self.site = site
        switch policy.kind {
        case .unbounded: (mode, capacity) = (.unbounded, Int.max)
        case .dropNewest(let n): (mode, capacity) = (.dropNewest, n)
        case .dropOldest(let n): (mode, capacity) = (.dropOldest, n)
        case .suspending(let n): (mode, capacity) = (.waiting, n)
        case .watermark(_, let high): (mode, capacity) = (.waiting, high)
        }
        switch policy.kind {
        case .watermark(let low, _): waiting = Waiting(lowWatermark: low)
        case .suspending: waiting = Waiting(lowWatermark: capacity - 1)
        case .unbounded, .dropNewest, .dropOldest: waiting = nil
        }
        phase = .idle
        teardown = .unstarted(builder)
    }

    /// Appends to the buffer. The first waiting element takes the buffer's inline slot: a stream
    /// whose consumer keeps up allocates nothing for its buffer, and neither does a policy of
    /// capacity 1. A ring replaces the slot when a second element has to wait: room for 2,
    /// doubling from there; lossy policies never grow it past their capacity. Two, not four: a
    /// 64-byte malloc chunk instead of 80 for an `Int` stream that buffered a little once; one
    /// more doubling for one that fills deeper.
    @inlinable @inline(__always)
    mutating func enqueue(_ element: __owned Element) {
        switch mode {
        case .dropNewest, .dropOldest:
            buffer.append(
                element, initialCapacity: Swift.min(capacity, Self.initialBufferCapacity), maximumCapacity: capacity)
        case .waiting:
            buffer.append(
                element, initialCapacity: Swift.min(Swift.max(capacity, 1), Self.initialBufferCapacity),
                maximumCapacity: .max)
        case .unbounded:
            buffer.append(element, initialCapacity: Self.initialBufferCapacity, maximumCapacity: .max)
        }
    }

    @inlinable static var initialBufferCapacity: Int { 2 }

    @inlinable
    mutating func discardBuffer() -> StreamRing<Element>? {
        guard !buffer.isEmpty else { return nil }
        return buffer.take()
    }

    // MARK: - Next

    @usableFromInline
    enum NextAction {
        /// Return this element. Resume `sender` (its element now has room) with `.enqueued`, and
        /// report `demand`.
        case element(Element, sender: SenderContinuation?, demand: Demand?)
        /// The stream is over: throw the failure, or return nil.
        case end(Failure?)
        /// The consumer's task was cancelled before the stream ended: throw `CancellationError`
        /// where `Failure` can hold it, else return nil.
        case cancelled
        /// First `next()`: run the builder (outside the lock), then call `builderReturned`.
        case runBuilder(Builder)
        /// The stream ended and its teardown, enqueued on the actor the consumer iterates on, is
        /// the consumer's to run (`takeTeardownEnqueuedForTheConsumer()`): act on it outside the
        /// lock, then ask again.
        case teardown(TeardownWork)
        /// Nothing buffered (or the end must wait for the teardown to return): suspend and call
        /// `suspend`.
        case suspend
        /// Rendezvous pull source: nothing buffered yet. Report `demand` (one element) outside the
        /// lock, then ask again: a source that answers synchronously has yielded by then.
        case askProducer(Demand)
    }

    /// `next()`'s common case, inlined into the consumer's loop: an element is buffered and
    /// taking it gives nobody anything (no sender waiting for room, no demand to report). Nil
    /// means "ask `next()`". A non-empty buffer implies `.streaming` or `.finished` (the buffer
    /// is discarded on termination, and nothing is yielded before the builder runs), where
    /// `next()` would return the same element with no sender and no demand.
    @inlinable @inline(__always)
    mutating func takeBuffered() -> Element? {
        guard !signalsDemandOnTake, !hasSenders else { return nil }
        return buffer.popFirst()
    }

    /// `yield`'s common case, inlined into the producer: under `.unbounded`, while streaming with
    /// no consumer waiting, the element only joins the buffer and the answer is `.enqueued`.
    @inlinable @inline(__always)
    var yieldOnlyBuffers: Bool {
        guard mode == .unbounded, consumer == nil, case .streaming = phase else { return false }
        return true
    }

    /// The consumer asks for an element without suspending. `mayRunTeardown`: false where the
    /// consumer cannot act on `.teardown` (from `suspend`, under the lock): a teardown the consumer
    /// could take is then left in place, and the consumer is resumed to take it (`wokenWithNil()`).
    @inlinable
    mutating func next(mayRunTeardown: Bool = true) -> NextAction {
        switch phase {
        case .streaming:
            if let element = buffer.popFirst() {
                var sender: SenderContinuation?
                if hasSenders && buffer.count < capacity {
                    let first = senders.removeFirst()
                    enqueue(first.element)
                    sender = first.continuation
                }
                return .element(element, sender: sender, demand: signalsDemandOnTake ? demandAfterTake() : nil)
            }
            if hasSenders {
                // Rendezvous: take the element straight from the waiting sender.
                let first = senders.removeFirst()
                return .element(
                    first.element, sender: first.continuation, demand: signalsDemandOnTake ? demandAfterTake() : nil)
            }
            return .suspend
        case .finished(let failure):
            if let element = buffer.popFirst() {
                return .element(element, sender: nil, demand: nil)
            }
            // The producer's teardown is still in flight (on the thread that finished, or enqueued
            // on its actor): wait for it, so that whatever follows the consumer's loop sees it
            // done; run it here if it is enqueued on the consumer's own actor.
            if mayRunTeardown, let work = takeTeardownEnqueuedForTheConsumer() { return .teardown(work) }
            guard teardownDone else { return .suspend }
            phase = .terminated(unreported: nil)
            return .end(failure)
        case .terminated(let unreported):
            // Ended while the teardown (or the cancellation's reports) is in flight: wait for it
            // (`teardownReturned()` or `reportsReturned()` resumes the consumer, which then asks
            // `wokenWithNil()`), or run the teardown here, as above.
            if mayRunTeardown, let work = takeTeardownEnqueuedForTheConsumer() { return .teardown(work) }
            if endInFlight { return .suspend }
            if let unreported {
                phase = .terminated(unreported: nil)
                cancellationUnreported = false
                return .end(unreported)
            }
            if takeCancellation() { return .cancelled }
            return .end(nil)
        case .idle:
            phase = .streaming
            return .runBuilder(takeBuilder(leaving: .notYetReturned(nil)))
        }
    }

    /// `next()`, except that where the consumer would suspend under `.rendezvous` with a demand
    /// handler, it first asks the producer for one element (``demandBeforeSuspending()``), under
    /// the same lock. Asked once per wait: the demand it grants makes the next call suspend.
    @inlinable
    mutating func nextAskingBeforeSuspending() -> NextAction {
        let action = next()
        guard case .suspend = action, let demand = demandBeforeSuspending() else { return action }
        return .askProducer(demand)
    }

    @usableFromInline
    enum SuspendAction {
        /// Suspended; report `demand` (rendezvous: the consumer is asking for one element).
        case suspended(demand: Demand?)
        /// Something arrived meanwhile: resume at once with it, and resume `sender` with `.enqueued`.
        case resume(Consumer, Wakeup, sender: SenderContinuation?)
        /// Another task is already suspended on this iterator: resume this one with nil and report.
        case concurrentIteration(Consumer)
    }

    /// The consumer found nothing and is now suspended on `continuation`.
    @inlinable
    mutating func suspend(_ continuation: Consumer) -> SuspendAction {
        // (A consumer is held only while streaming or finished, or while terminated waiting for the
        // teardown to return.)
        if consumer != nil { return .concurrentIteration(continuation) }
        switch next(mayRunTeardown: false) {
        case .suspend:
            consumer = continuation
            guard mode == .waiting, capacity == 0, case .streaming = phase, granted == 0,
                let handler = demandHandler
            else { return .suspended(demand: nil) }
            granted = 1
            return .suspended(demand: Demand(handler, 1))
        case .element(let element, let sender, let demand):
            return .resume(continuation, Wakeup(.success(element), demand: demand), sender: sender)
        case .end(let failure):
            return .resume(continuation, Wakeup(failure.map { .failure($0) } ?? .success(nil)), sender: nil)
        case .cancelled:
            cancellationUnreported = true  // the consumer asks `takeCancellation()` once resumed with nil
            return .resume(continuation, Wakeup(.success(nil)), sender: nil)
        case .runBuilder:
            preconditionFailure("Internal inconsistency: suspended before the builder ran")
        case .teardown:
            preconditionFailure("Internal inconsistency: suspend() was handed a teardown to run")
        case .askProducer:
            preconditionFailure("Internal inconsistency: next() asked the producer")
        }
    }

    // MARK: - Consumer gone or cancelled

    @usableFromInline
    enum TerminateAction {
        case none
        /// Outside the lock: resume the waiting senders with `.terminated`; act on the teardown
        /// (`TeardownWork`); resume the suspended consumer with nil (none while the teardown is
        /// in flight: its return resumes it); report the discarded elements (buffered, then those
        /// of waiting senders) as undelivered, and release the rest. From a cancellation handler,
        /// all but the resumptions and the enqueue go to the teardown queue.
        case terminate(
            builder: Builder?,
            consumer: Consumer?,
            senders: [Sender],
            teardown: TeardownWork?,
            discarded: StreamRing<Element>?,
            demand: DemandHandler?
        )
    }

    /// The consumer ended the stream in its own task: its `next()` saw the task cancelled
    /// (`cancelled`), or its iterator was released. A teardown already enqueued on the actor the
    /// consumer iterates on is run by the consumer now, so that its loop ends after it.
    ///
    /// `offTheMainQueue`: the iterator was released where the main queue does not run. Released
    /// outside a `for await` (kept in an object whose deinit ran elsewhere, or advanced with
    /// another actor's isolation), a main-actor consumer's iterator is then not on its actor: it
    /// ends the stream as a producer would, enqueueing a main-actor teardown there.
    @inlinable
    mutating func consumerTerminated(cancelled: Bool, offTheMainQueue: Bool = false) -> TerminateAction {
        if offTheMainQueue, teardownPlace == .consumersMainActor {
            switch phase {
            case .streaming, .finished: return terminate(cancelled: cancelled, by: .producer)
            case .idle, .terminated: break  // nothing of the actor's to run
            }
        }
        switch phase {
        case .idle:
            phase = .terminated(unreported: nil)
            cancellationUnreported = cancelled
            return .terminate(
                builder: takeBuilder(leaving: .spent), consumer: nil, senders: [], teardown: nil, discarded: nil,
                demand: nil)
        case .streaming, .finished:
            return terminate(cancelled: cancelled, by: .consumer)
        case .terminated:
            guard let work = takeTeardownEnqueuedForTheConsumer() else { return .none }
            return .terminate(builder: nil, consumer: nil, senders: [], teardown: work, discarded: nil, demand: nil)
        }
    }

    /// The consumer, iterating on the actor its teardown was written on, takes the teardown
    /// enqueued there, to run it before its loop ends rather than wait for that job.
    @inlinable
    mutating func takeTeardownEnqueuedForTheConsumer() -> TeardownWork? {
        guard teardownPlace.isTheConsumersActor, let (held, termination) = takeEnqueuedTeardown() else { return nil }
        return .runHere(held, termination)
    }

    /// The consumer was handed an element (a yield resumed it with one) and, by the time its task
    /// runs, the task is cancelled: if that cancellation ended the stream (its handler ran as the
    /// element was being handed), the element is undelivered and the consumer goes to the end,
    /// which waits for the teardown the handler started; if the handler has not decided yet, the
    /// consumer ends the stream itself, here. Returns whether the element is revoked (and what
    /// ending the stream here takes); a stream the producer ended first delivers it.
    @inlinable
    mutating func handedElementWhileCancelled() -> (revoked: Bool, TerminateAction) {
        switch phase {
        case .streaming:
            return (true, terminate(cancelled: true, by: .consumer))
        case .terminated where cancellationUnreported:
            return (true, .none)
        case .idle, .finished, .terminated:
            return (false, .none)
        }
    }

    /// The consumer's task was cancelled while it waited in `next()`, or had just been handed an
    /// element there (its cancellation handler, on the cancelling thread): the cancellation is
    /// decided here, whenever the consumer's task gets to run. From now on yields answer
    /// `.terminated`, buffered elements are undelivered, a `finish` or a released sink changes
    /// nothing, and the teardown learns `.cancelled`. The teardown is not run here (a handler must
    /// not run user code or wait): it goes to the teardown queue, or to its actor. A parked
    /// consumer stays suspended until it returned; one that was handed an element finds, when its
    /// task runs, the element revoked (`handedElementWhileCancelled()`) and waits for it in its
    /// `next()`: its loop ends after the teardown either way.
    @inlinable
    mutating func consumerCancelled() -> TerminateAction {
        switch phase {
        case .streaming, .finished: terminate(cancelled: true, by: .cancellationHandler)
        case .idle, .terminated: .none
        }
    }

    /// Ends a streaming (or finished and not yet drained) stream from the consumer's side.
    @inlinable
    mutating func terminate(cancelled: Bool, by ender: Ender) -> TerminateAction {
        // A producer that failed ended the stream before the cancellation: the loop ends as
        // the stream did, with the failure (the elements still buffered are discarded, as on
        // any cancellation). A producer that finished with nothing left to deliver ended it
        // first too: the cancellation cuts nothing short. Otherwise the cancellation ended it.
        if case .finished(let failure) = phase, failure != nil || buffer.isEmpty {
            cancellationUnreported = false
            phase = .terminated(unreported: failure)
        } else {
            cancellationUnreported = cancelled
            phase = .terminated(unreported: nil)
        }
        let work = takeTeardown(.cancelled, by: ender)
        let waitingSenders = senders
        let discarded = discardBuffer()
        // A cancellation handler may not run `onUndelivered` (user code): the teardown queue
        // reports what it discarded, and the loop ends only after that, as after the teardown.
        if ender == .cancellationHandler, discarded != nil || !waitingSenders.isEmpty { reportsInFlight = true }
        // While the teardown or the reports are in flight, a suspended consumer stays: their
        // return resumes it.
        let suspendedConsumer = endInFlight ? nil : consumer
        if suspendedConsumer != nil { consumer = nil }
        let demand = demandHandler
        if let waitingState = waiting {
            waitingState.senders = []
            waitingState.demandHandler = nil
        }
        return .terminate(
            builder: nil,
            consumer: suspendedConsumer,
            senders: waitingSenders,
            teardown: work,
            discarded: discarded,
            demand: demand
        )
    }

    /// Whether the consumer's cancellation ended the stream and it has not been told yet
    /// (the answer is true only once).
    @inlinable
    mutating func takeCancellation() -> Bool {
        defer { cancellationUnreported = false }
        return cancellationUnreported
    }

    @usableFromInline
    enum NilWakeupAction {
        /// The stream ended and its teardown, enqueued on the consumer's actor, is the consumer's
        /// to run: act on it, then ask `next()` (which answers the end once it returned).
        case teardown(TeardownWork)
        /// The teardown is in flight: ask `next()`, which waits for its return.
        case askAgain
        /// The stream ended because the consumer's task was cancelled.
        case cancelled
        /// The end: throw the failure, or return nil.
        case end(Failure?)
    }

    /// A consumer suspended in `next()` was resumed with nil: the end (its cancellation's, or the
    /// producer's), or the `nil` of a second concurrent iteration.
    @inlinable
    mutating func wokenWithNil() -> NilWakeupAction {
        if let work = takeTeardownEnqueuedForTheConsumer() { return .teardown(work) }
        if endInFlight { return .askAgain }
        if takeCancellation() { return .cancelled }
        if case .terminated(let unreported?) = phase {
            phase = .terminated(unreported: nil)
            return .end(unreported)
        }
        return .end(nil)
    }

    // MARK: - Yield

    @usableFromInline
    enum YieldAction {
        /// Hand the element to the suspended consumer (with `demand` for it to report), and answer `result`.
        case resumeConsumer(Consumer, Element, demand: Demand?, result: YieldResult)
        /// Answer `result` (`.enqueued` or `.stopProducing`).
        case answer(YieldResult)
        /// The policy dropped this element: report it to `onDrop` and answer `.dropped(element)`.
        case dropped(Element)
        /// The stream is over: the element is undelivered; answer `.terminated`; report misuse if
        /// the producer had finished.
        case terminated(Element, reportYieldAfterFinish: Bool)
    }

    @inlinable
    mutating func yield(_ element: Element) -> YieldAction {
        switch phase {
        case .streaming:
            if let suspended = consumer {
                consumer = nil
                if mode == .waiting { useDemand() }
                return .resumeConsumer(
                    suspended,
                    element,
                    demand: signalsDemandOnTake ? demandAfterTake() : nil,
                    result: mode == .waiting && capacity == 0 ? .stopProducing : .enqueued
                )
            }
            switch mode {
            case .unbounded:
                enqueue(element)
                return .answer(.enqueued)
            case .dropNewest:
                // `.drop`: while the builder runs, the first next() is the waiting consumer.
                if buffer.count < capacity {
                    enqueue(element)
                    return .answer(.enqueued)
                }
                droppedCount += 1
                return .dropped(element)
            case .dropOldest:
                if buffer.count < capacity {
                    enqueue(element)
                    return .answer(.enqueued)
                }
                let oldest = buffer.popFirst()!
                enqueue(element)
                droppedCount += 1
                return .dropped(oldest)
            case .waiting:
                useDemand()
                // Behind the waiting sends (a cancelled one keeps its place), so that one producer's
                // elements keep their order; id 0 is no send's (theirs start at 1).
                if hasSenders {
                    senders.append(Sender(id: 0, element: element, continuation: nil))
                } else {
                    enqueue(element)
                }
                return .answer(buffer.count + senders.count >= capacity ? .stopProducing : .enqueued)
            }
        case .finished, .terminated:
            return .terminated(element, reportYieldAfterFinish: noteMisuseAfterFinish())
        case .idle:
            preconditionFailure("Internal inconsistency: yield before the builder ran")
        }
    }

    /// Whether a yield/finish now is the producer's misuse. Every occurrence is reported: the
    /// diagnostics ledger delivers the first per stream and kind and counts the rest.
    @inlinable
    mutating func noteMisuseAfterFinish() -> Bool {
        producerFinished && !reportedYieldAfterFinish
    }

    // MARK: - Finish

    @usableFromInline
    enum FinishAction {
        case none
        /// Report a second finish (or a finish after the sink was released), with the error it
        /// passed, which reaches nobody.
        case reportFinishAfterFinish(Failure?)
        /// The consumer had already ended the stream: this failure reaches nobody. Report it.
        case reportFailureAfterEnd(Failure)
        /// Outside the lock: act on the teardown (`TeardownWork`; its return resumes a consumer
        /// waiting for the end, so the consumer's loop ends after it), and resume `senders` with
        /// `.enqueued` (their elements were moved into the buffer and will be delivered).
        case finish(senders: [SenderContinuation], teardown: TeardownWork?, demand: DemandHandler?)
    }

    /// The producer finished (`failure`: with that error), on its own thread.
    @inlinable
    mutating func finish(_ failure: Failure?) -> FinishAction {
        switch phase {
        case .streaming:
            producerFinished = true
            let demand = demandHandler  // no more demand once the producer is done: release it
            waiting?.demandHandler = nil
            var resumed: [SenderContinuation] = []
            if !senders.isEmpty {
                resumed.reserveCapacity(senders.count)
                for sender in senders {
                    enqueue(sender.element)
                    if let continuation = sender.continuation { resumed.append(continuation) }
                }
                senders = []
            }
            phase = .finished(failure)
            // A consumer waiting in `next()` stays: the teardown's return resumes it with the end.
            let teardown = takeTeardown(failure.map { .failed($0) } ?? .finished, by: .producer)
            return .finish(senders: resumed, teardown: teardown, demand: demand)
        case .terminated where !producerFinished:
            // The consumer ended first (cancelled, broke out, or its task was cancelled while it
            // waited, whether or not it has run since): finishing from the teardown is normal, but
            // an error passed now reaches nobody, so it is reported, not swallowed.
            producerFinished = true
            if let failure { return .reportFailureAfterEnd(failure) }
            return .none
        case .finished, .terminated:
            return noteMisuseAfterFinish() ? .reportFinishAfterFinish(failure) : .none
        case .idle:
            preconditionFailure("Internal inconsistency: finish before the builder ran")
        }
    }

    /// Every copy of the sink was released. If the producer had not finished, the stream
    /// finishes (and this is reported) so that the consumer does not wait forever: with
    /// `lostProducer` (``BridgeError/sinkDropped`` where `Failure` can hold it), so that a lost
    /// source never reads as a completed one, else normally.
    @inlinable
    mutating func producerReleased(lostProducer: Failure?) -> FinishAction? {
        guard case .streaming = phase, !producerFinished else { return nil }
        let action = finish(lostProducer)
        reportedYieldAfterFinish = true  // nobody can yield through a released sink
        return action
    }

    @inlinable
    var isTerminated: Bool {
        switch phase {
        case .idle, .streaming: false
        case .finished, .terminated: true
        }
    }
}

// A wake-up is created by the thread that resumes the consumer and read only by the consumer it
// resumes: the element moves from one producer to one consumer and is never shared, exactly as
// `AsyncStream` hands over its (possibly non-Sendable) elements.
extension CallbackStreamStateMachine.Wakeup: @unchecked Sendable {}
