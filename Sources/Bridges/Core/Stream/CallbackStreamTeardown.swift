/// The teardown slot of ``CallbackStreamStateMachine``: the builder, then the teardown it
/// returned, and where that teardown runs when the stream ends: who ends the stream (`Ender`)
/// and where the teardown was written (`TeardownPlace`) decide it (`takeTeardown`). Part of the
/// machine's state, decided under the stream's lock like the rest.
extension CallbackStreamStateMachine {
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
        /// `.consumersActor` where that actor is the main actor: the same, except that a release
        /// of the iterator is taken for the consumer's only where the main queue runs it (which
        /// Bridges can check for the main actor, and for no other actor).
        case consumersMainActor = 3

        /// Whether the consumer iterates on the actor the teardown was written on.
        @inlinable var isTheConsumersActor: Bool { self == .consumersActor || self == .consumersMainActor }
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
            case (.anywhere, _), (.consumersActor, .consumer), (.consumersMainActor, .consumer):
                teardown = .running
                return .runHere(held, termination)
            case (.consumersActor, _), (.consumersMainActor, _), (.otherActor, _):
                teardown = .enqueued(held, termination)
                return .enqueue(on: held)
            }
        case .enqueued(let held, let enqueuedFor) where ender == .consumer && teardownPlace.isTheConsumersActor:
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

    /// The consumer's cancellation handler discarded elements (buffered, or of waiting senders)
    /// that the teardown queue has not reported as undelivered yet: the loop waits for that, as
    /// for the teardown, so that it ends with every element accounted for.
    @inlinable var reportsInFlight: Bool {
        get { marks & Self.reportsInFlightMark != 0 }
        set { marks = newValue ? marks | Self.reportsInFlightMark : marks & ~Self.reportsInFlightMark }
    }

    /// Whether the consumer must wait before it sees the end: the teardown or the cancellation's
    /// reports have not returned.
    @inlinable var endInFlight: Bool { teardownInFlight || reportsInFlight }

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
    /// the buffer is drained, or the consumer was cancelled) and nothing else is in flight, it is
    /// resumed with it now; a cancelled consumer is resumed with nil and asks `takeCancellation()`.
    @inlinable
    mutating func teardownReturned() -> (Consumer, Failure?)? {
        teardown = .spent
        return consumerParkedForTheEnd()
    }

    /// The teardown queue reported the elements the cancellation handler discarded: resumes the
    /// consumer as `teardownReturned()` does, if the teardown has returned too.
    @inlinable
    mutating func reportsReturned() -> (Consumer, Failure?)? {
        reportsInFlight = false
        return consumerParkedForTheEnd()
    }

    /// The consumer waiting for the end, taken to be resumed, once nothing is in flight.
    @inlinable
    mutating func consumerParkedForTheEnd() -> (Consumer, Failure?)? {
        guard !endInFlight, let suspended = consumer else { return nil }
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
}
