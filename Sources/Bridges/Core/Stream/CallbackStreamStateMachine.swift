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

    /// Demand to report to the producer: call `handler` with `count`, outside the lock.
    @usableFromInline
    struct Demand {
        @usableFromInline let handler: DemandHandler
        @usableFromInline let count: Int

        @inlinable
        init(_ handler: @escaping DemandHandler, _ count: Int) {
            self.handler = handler
            self.count = count
        }

        @inlinable func report() { handler(count) }
    }

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

    /// The builder, then the teardown it returned, tracked apart from the phase because the
    /// producer may finish while the builder is still running. (The builder is kept here, not in
    /// `.idle`, because the two are never needed at once: one payload for both keeps the `Int`
    /// stream's state 24 bytes smaller.)
    @usableFromInline
    enum TeardownState {
        /// The builder, not run yet: exactly while the phase is `.idle`.
        case unstarted(Builder)
        /// The builder was taken to run and has not returned yet. Objects the sink was asked to
        /// keep until the teardown (a delegate proxy made in the builder) wait here.
        case notYetReturned(Kept?)
        /// Returned and not run: runs when the stream ends.
        case held(Teardown)
        /// The stream ended (for this reason) while the builder ran: run the teardown as soon as
        /// it is returned.
        case runWhenReturned(Termination, Kept?)
        /// The stream ended (for this reason) on a thread that may not run the teardown: it was
        /// written on an actor, and that actor runs it, in a job enqueued there
        /// (`takeEnqueuedTeardown()`), or sooner when code on that actor reaches the stream: its
        /// consumer, if it iterates there, or a stream builder about to run there.
        case enqueued(Teardown, Termination)
        /// Taken by a thread that runs it now and then calls `teardownReturned()`. Until then the
        /// consumer does not see the end: it waits in `consumer`, whatever the phase.
        case running
        /// Run, or never needed (the builder never ran).
        case spent
    }

    @usableFromInline typealias Kept = CallbackStream<Element, Failure>.Teardown.Kept

    /// Who ends the stream (takes its teardown), which says where the teardown may run.
    @usableFromInline
    enum Ender {
        /// The consumer, in its own task, on the actor it iterates on: its `next()` saw its task
        /// cancelled or the end, its iterator was released, or its first `next()` got the
        /// builder's teardown back after the stream had ended.
        case consumer
        /// Any other thread: the producer finishing, its sink released, a broadcast's or an
        /// operator's fan-out, a job on the teardown's actor.
        case producer
        /// The consumer's task's cancellation handler, on the cancelling thread: nothing it does
        /// may run user code or wait, and nothing may wait for the consumer's task to run.
        case cancellationHandler
    }

    /// Where the teardown may run, learned when the builder returned it (in ``marks``).
    @usableFromInline
    enum TeardownPlace: UInt8 {
        /// Made in nonisolated code: on whichever thread takes it.
        case anywhere = 0
        /// Made on the actor the consumer iterates on: the consumer runs it itself; any other
        /// ender enqueues it there.
        case consumersActor = 1
        /// Made on another actor: enqueued there, whoever ends the stream.
        case otherActor = 2
    }

    /// What the thread that took the teardown does with it once the lock is released.
    @usableFromInline
    enum TeardownWork {
        /// Run it now, on this thread, then call `teardownReturned()`.
        case runHere(Teardown, Termination)
        /// Taken in the consumer's cancellation handler, which may neither run it nor wait for
        /// the consumer's task: run it on Bridges' teardown queue, then `teardownReturned()`.
        case runOnQueue(Teardown, Termination)
        /// Left in `.enqueued`: enqueue a job that calls `takeEnqueuedTeardown()` on the actor
        /// `teardown` belongs to.
        case enqueue(on: Teardown)
    }

    /// An `await send` suspended because a waiting policy had no room for its element. A
    /// cancelled sender keeps its place (its element is still delivered in the order it was
    /// sent); only its continuation is taken.
    @usableFromInline
    struct Sender {
        @usableFromInline let id: UInt64
        @usableFromInline let element: Element
        @usableFromInline var continuation: SenderContinuation?

        @inlinable
        init(id: UInt64, element: Element, continuation: SenderContinuation?) {
            self.id = id
            self.element = element
            self.continuation = continuation
        }
    }

    /// What only the waiting policies (`.suspending(n)`, `.watermark`, `.rendezvous`) use:
    /// suspended senders and the demand reported to a pull source. An object of its own, made
    /// with the machine for those policies only, so the others (most streams: `.unbounded`, the
    /// lossy ones) do not carry 48 bytes they never touch. Read and written only under the
    /// stream's lock, like the rest of the machine (hence no exclusivity checks: a dynamic one
    /// per access would cost more than the field).
    @usableFromInline
    final class Waiting {
        /// Demand is reported only once the depth is at most this (`.suspending(n)`: n − 1, as
        /// soon as there is room; `.watermark(low:high:)`: low).
        @usableFromInline let lowWatermark: Int
        /// `await send`s waiting for room, oldest first.
        @usableFromInline @exclusivity(unchecked) var senders: [Sender] = []
        @usableFromInline @exclusivity(unchecked) var nextSenderID: UInt64 = 0
        @usableFromInline @exclusivity(unchecked) var demandHandler: DemandHandler?
        /// Demand reported to `demandHandler` and not yet used by a yield. Demand is reported
        /// from depth: only when the room in the buffer exceeds this, and only the difference,
        /// so the producer is never told it may send more than fits.
        @usableFromInline @exclusivity(unchecked) var granted = 0

        @inlinable init(lowWatermark: Int) { self.lowWatermark = lowWatermark }
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
    /// field): see ``reportedYieldAfterFinish``, ``demandRegistered`` and ``teardownPlace``.
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

    /// Where the teardown may run (set when the builder returns it).
    @inlinable var teardownPlace: TeardownPlace {
        get { TeardownPlace(rawValue: (marks >> Self.teardownPlaceShift) & 3) ?? .anywhere }
        set { marks = marks & ~(3 << Self.teardownPlaceShift) | newValue.rawValue << Self.teardownPlaceShift }
    }

    /// A yield after the producer finished was reported (it is reported once).
    @inlinable var reportedYieldAfterFinish: Bool {
        get { marks & Self.reportedYieldAfterFinishMark != 0 }
        set {
            marks = newValue ? marks | Self.reportedYieldAfterFinishMark : marks & ~Self.reportedYieldAfterFinishMark
        }
    }

    /// A demand handler was registered (under any policy): a source that must send only what
    /// it was asked for (a Combine publisher) has been asked. Before that, every yield of such a
    /// source is beyond demand (see ``CallbackStreamStorage/decideYieldWithinDemand(_:)``).
    @inlinable var demandRegistered: Bool {
        get { marks & Self.demandRegisteredMark != 0 }
        set { marks = newValue ? marks | Self.demandRegisteredMark : marks & ~Self.demandRegisteredMark }
    }

    // The waiting policies' fields, through `waiting`. Read only where the mode is `.waiting`
    // (or, for `senders`, `hasSenders` and `demandHandler`, anywhere: no waiting state means no
    // senders and no handler), and written only there: touching the others under another policy
    // traps (a force unwrap: one predictable branch, never undefined behaviour).

    @inlinable var lowWatermark: Int { waiting!.lowWatermark }
    @inlinable var senders: [Sender] {
        get { waiting?.senders ?? [] }
        nonmutating _modify { yield &waiting!.senders }
    }
    @inlinable var hasSenders: Bool {
        guard let waiting else { return false }
        return !waiting.senders.isEmpty
    }
    @inlinable var nextSenderID: UInt64 {
        get { waiting!.nextSenderID }
        nonmutating set { waiting!.nextSenderID = newValue }
    }
    @inlinable var demandHandler: DemandHandler? {
        get { waiting?.demandHandler }
        nonmutating set { waiting!.demandHandler = newValue }
    }
    @inlinable var granted: Int {
        get { waiting!.granted }
        nonmutating set { waiting!.granted = newValue }
    }

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

    /// Whether taking an element may give the producer more demand (`.suspending(n)`, n > 0).
    @inlinable var signalsDemandOnTake: Bool { mode == .waiting && capacity > 0 }

    /// Room left in the buffer (negative when a synchronous yield overfilled it).
    @inlinable var room: Int { capacity - buffer.count - senders.count }

    /// After a take under `.suspending(n)`: the demand the producer has not been told of yet.
    @inlinable
    mutating func demandAfterTake() -> Demand? {
        guard signalsDemandOnTake, let handler = demandHandler else { return nil }
        let room = self.room
        guard room > granted, capacity - room <= lowWatermark else { return nil }
        defer { granted = room }
        return Demand(handler, room - granted)
    }

    /// Whether a yield now stays within the demand reported to the producer: always, except
    /// under a waiting policy whose reported demand is used up (a source that must send only
    /// what was asked, such as a Combine publisher, is then misbehaving).
    @inlinable var yieldIsDemanded: Bool {
        guard let waiting else { return true }
        return waiting.granted > 0
    }

    /// A yield under a waiting policy uses one unit of the demand reported (if any was left).
    @inlinable
    mutating func useDemand() {
        if granted > 0 { granted -= 1 }
    }

    @inlinable
    mutating func discardBuffer() -> StreamRing<Element>? {
        guard !buffer.isEmpty else { return nil }
        return buffer.take()
    }

    /// Takes the teardown for `termination`, if it was returned and not yet taken, and says where
    /// it runs: here (nonisolated, or the consumer on its own actor), on the teardown queue (the
    /// cancellation handler may not run it), or enqueued on its actor. The consumer also takes a
    /// teardown already enqueued on the actor it iterates on, for the reason it was enqueued
    /// with: its loop then ends after the teardown without waiting for that job.
    @inlinable
    mutating func takeTeardown(_ termination: Termination, by ender: Ender) -> TeardownWork? {
        switch teardown {
        case .held(let held):
            switch (teardownPlace, ender) {
            case (.anywhere, .cancellationHandler):
                teardown = .running
                return .runOnQueue(held, termination)
            case (.anywhere, _), (.consumersActor, .consumer):
                teardown = .running
                return .runHere(held, termination)
            case (.consumersActor, _), (.otherActor, _):
                teardown = .enqueued(held, termination)
                return .enqueue(on: held)
            }
        case .enqueued(let held, let enqueuedFor) where ender == .consumer && teardownPlace == .consumersActor:
            teardown = .running
            return .runHere(held, enqueuedFor)
        case .notYetReturned(let kept):
            teardown = .runWhenReturned(termination, kept)
            return nil
        case .runWhenReturned, .enqueued, .running, .spent, .unstarted:
            return nil
        }
    }

    /// A job on the teardown's actor (or a builder about to run there) takes the teardown that
    /// was enqueued there, if nobody ran it yet.
    @inlinable
    mutating func takeEnqueuedTeardown() -> (Teardown, Termination)? {
        guard case .enqueued(let held, let termination) = teardown else { return nil }
        teardown = .running
        return (held, termination)
    }

    /// The consumer, in its own task, takes the teardown of a stream that already ended if
    /// nobody runs it yet: one its task's cancellation handler left to it (the consumer was not
    /// waiting in `next()` then, so it could have left its loop while the teardown ran on the
    /// queue), or one enqueued on the actor the consumer iterates on.
    @inlinable
    mutating func takeTeardownForTheConsumer() -> TeardownWork? {
        switch phase {
        case .finished(let failure): takeTeardown(failure.map { .failed($0) } ?? .finished, by: .consumer)
        case .terminated: takeTeardown(.cancelled, by: .consumer)
        case .idle, .streaming: nil
        }
    }

    /// Keeps `object` alive until the teardown has run (a delegate proxy the manager holds
    /// weakly): it rides with the teardown and is released with it. False once the teardown was
    /// taken to run (or the builder never ran): nothing is kept then.
    @inlinable
    mutating func keepUntilTeardown(_ object: AnyObject) -> Bool {
        switch teardown {
        case .notYetReturned(let kept):
            teardown = .notYetReturned(Kept.adding(object, to: kept))
        case .runWhenReturned(let termination, let kept):
            teardown = .runWhenReturned(termination, Kept.adding(object, to: kept))
        case .held(let held):
            teardown = .held(held.keeping(object))
        case .enqueued(let held, let termination):
            teardown = .enqueued(held.keeping(object), termination)
        case .unstarted, .running, .spent:
            return false
        }
        return true
    }

    /// Moves the builder out of an idle stream's state (to run it, or to release it unrun).
    @inlinable
    mutating func takeBuilder(leaving next: TeardownState) -> Builder {
        guard case .unstarted(let builder) = teardown else {
            preconditionFailure("Internal inconsistency: an idle stream without its builder (\(teardown))")
        }
        teardown = next
        return builder
    }

    /// Whether the consumer may see the end now: the teardown has returned (or never existed).
    @inlinable
    var teardownDone: Bool {
        if case .spent = teardown { true } else { false }
    }

    /// Whether the teardown was taken and has not returned: another thread runs it now
    /// (`.running`; the consumer's own thread runs it only between its events, so the consumer
    /// never waits for itself), or its actor will (`.enqueued`).
    @inlinable
    var teardownInFlight: Bool {
        switch teardown {
        case .running, .enqueued: true
        case .unstarted, .notYetReturned, .held, .runWhenReturned, .spent: false
        }
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
        /// The stream ended and its teardown is the consumer's to take (see
        /// `takeTeardownForTheConsumer()`): act on it outside the lock, then ask again.
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
            if mayRunTeardown, let work = takeTeardownForTheConsumer() { return .teardown(work) }
            guard teardownDone else { return .suspend }
            phase = .terminated(unreported: nil)
            return .end(failure)
        case .terminated(let unreported):
            // Ended while the teardown is in flight: wait for it (`teardownReturned()` resumes the
            // consumer, which then asks `wokenWithNil()`), or run it here, as above.
            if mayRunTeardown, let work = takeTeardownForTheConsumer() { return .teardown(work) }
            if teardownInFlight { return .suspend }
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

    /// The builder returned its teardown, which may run at `place`. If the stream already ended,
    /// the consumer (whose first `next()` ran the builder) takes it as it would at the end.
    @inlinable
    mutating func builderReturned(_ returned: Teardown, place: TeardownPlace = .anywhere) -> TeardownWork? {
        teardownPlace = place
        switch teardown {
        case .notYetReturned(let kept):
            teardown = .held(returned.keeping(kept))
            return nil
        case .runWhenReturned(let termination, let kept):
            teardown = .held(returned.keeping(kept))
            return takeTeardown(termination, by: .consumer)
        case .held, .enqueued, .running, .spent, .unstarted:
            preconditionFailure("Internal inconsistency: the builder returned twice (\(teardown))")
        }
    }

    /// The teardown returned. If the consumer is waiting for the end (the producer finished and
    /// the buffer is drained, or the consumer was cancelled), it is resumed with it now; a
    /// cancelled consumer is resumed with nil and asks `takeCancellation()`.
    @inlinable
    mutating func teardownReturned() -> (Consumer, Failure?)? {
        teardown = .spent
        guard let suspended = consumer else { return nil }
        switch phase {
        case .finished(let failure) where buffer.isEmpty:
            consumer = nil
            phase = .terminated(unreported: nil)
            return (suspended, failure)
        case .terminated(let unreported):
            consumer = nil
            phase = .terminated(unreported: nil)
            if unreported != nil { cancellationUnreported = false }
            return (suspended, unreported)
        case .idle, .streaming, .finished:
            return nil
        }
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

    /// Rendezvous (`.suspending(0)`) with a demand handler: before the consumer suspends, ask
    /// the producer for one element (once per wait), so that a source that answers
    /// synchronously (a Combine publisher's `request(.max(1))`, a pull source) hands its element
    /// over without the consumer suspending at all; `suspend` then asks nothing more. Returns
    /// nil when there is nothing to ask.
    @inlinable
    mutating func demandBeforeSuspending() -> Demand? {
        guard mode == .waiting, capacity == 0, case .streaming = phase, consumer == nil, granted == 0,
            buffer.isEmpty, senders.isEmpty, let handler = demandHandler
        else { return nil }
        granted = 1
        return Demand(handler, 1)
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
    @inlinable
    mutating func consumerTerminated(cancelled: Bool) -> TerminateAction {
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
            guard let work = takeTeardownForTheConsumer() else { return .none }
            return .terminate(builder: nil, consumer: nil, senders: [], teardown: work, discarded: nil, demand: nil)
        }
    }

    /// The consumer's task was cancelled while it waited in `next()` (its cancellation handler,
    /// on the cancelling thread): the cancellation is decided here, whenever the consumer's task
    /// gets to run. From now on yields answer `.terminated`, buffered elements are undelivered, a
    /// `finish` or a released sink changes nothing, and the teardown learns `.cancelled`. The
    /// teardown is not run here (a handler must not run user code or wait): it goes to the
    /// teardown queue, or to its actor. The consumer stays suspended until it returned.
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
        // The cancellation handler takes the teardown only for a consumer parked in `next()`, which
        // cannot leave its loop until the teardown returned; a consumer that is running, or was
        // just handed an element, takes it itself at its next step (`next()`, or its iterator's
        // release), before its loop can end.
        let work = ender == .cancellationHandler && consumer == nil ? nil : takeTeardown(.cancelled, by: ender)
        // While the teardown is in flight, a suspended consumer stays: its return resumes it.
        let suspendedConsumer = teardownInFlight ? nil : consumer
        if suspendedConsumer != nil { consumer = nil }
        let waitingSenders = senders
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
            discarded: discardBuffer(),
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
        /// The stream ended and its teardown is the consumer's to take: act on it, then ask
        /// `next()` (which answers the end once it returned).
        case teardown(TeardownWork)
        /// The stream ended because the consumer's task was cancelled.
        case cancelled
        /// The end: throw the failure, or return nil.
        case end(Failure?)
    }

    /// A consumer suspended in `next()` was resumed with nil: the end (its cancellation's, or the
    /// producer's), or the `nil` of a second concurrent iteration.
    @inlinable
    mutating func wokenWithNil() -> NilWakeupAction {
        if let work = takeTeardownForTheConsumer() { return .teardown(work) }
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

    // MARK: - Send

    @usableFromInline
    enum SendAttempt {
        /// Done without waiting: act on this yield action.
        case done(YieldAction)
        /// No room: suspend with this id and call `enqueueSender`.
        case mustWait(Element, id: UInt64)
    }

    @inlinable
    mutating func trySend(_ element: Element) -> SendAttempt {
        guard mode == .waiting, case .streaming = phase, consumer == nil,
            buffer.count + senders.count >= capacity
        else { return .done(sendWithoutWaiting(element)) }
        nextSenderID &+= 1
        return .mustWait(element, id: nextSenderID)
    }

    /// Like `yield`, except that a waiting policy that has room answers `.enqueued`.
    @inlinable
    mutating func sendWithoutWaiting(_ element: Element) -> YieldAction {
        switch yield(element) {
        case .resumeConsumer(let consumer, let element, let demand, _):
            return .resumeConsumer(consumer, element, demand: demand, result: .enqueued)
        case .answer:
            return .answer(.enqueued)
        case let other:
            return other
        }
    }

    @usableFromInline
    enum EnqueueSenderAction {
        /// Suspended until the consumer makes room.
        case suspended
        /// Room appeared (or the stream ended) meanwhile: act on this yield action and resume the
        /// sender with its result.
        case resumeNow(SenderContinuation, YieldAction)
    }

    @inlinable
    mutating func enqueueSender(
        _ element: Element, id: UInt64, _ continuation: SenderContinuation
    ) -> EnqueueSenderAction {
        guard case .streaming = phase, consumer == nil, buffer.count + senders.count >= capacity else {
            return .resumeNow(continuation, sendWithoutWaiting(element))
        }
        useDemand()
        senders.append(Sender(id: id, element: element, continuation: continuation))
        return .suspended
    }

    /// The sending task was cancelled: its element keeps its place in line (a waiting policy
    /// never loses data, and elements are delivered in the order they were sent, whatever the
    /// order of cancellation) and the sender is told `.stopProducing` now. Returns nil if it
    /// was already resumed.
    @inlinable
    mutating func cancelSender(id: UInt64) -> SenderContinuation? {
        guard let index = senders.firstIndex(where: { $0.id == id }) else { return nil }
        defer { senders[index].continuation = nil }
        return senders[index].continuation
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

    // MARK: - Demand

    /// Installs the demand handler; returns the demand to report at once, if any.
    @inlinable
    mutating func registerDemand(_ handler: @escaping DemandHandler) -> (initial: Int?, replaced: DemandHandler?) {
        switch phase {
        case .finished, .terminated:
            return (nil, nil)
        case .idle, .streaming:
            demandRegistered = true
            // The other policies never report more demand than this first, unlimited one, so
            // their handler is not kept (the caller still holds it to report `Int.max`).
            guard mode == .waiting else { return (Int.max, nil) }
            let replaced = demandHandler
            demandHandler = handler
            if capacity == 0 {
                granted = consumer != nil ? 1 : 0
                return (consumer != nil ? 1 : nil, replaced)
            }
            let room = self.room
            granted = Swift.max(room, 0)
            return (room > 0 ? room : nil, replaced)
        }
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
