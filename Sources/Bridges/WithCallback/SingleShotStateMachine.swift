/// The state of one `withCallback` bridge: a pure value, no locks, no continuations resumed.
///
/// ``SingleShotStorage`` takes its lock, calls one `mutating` event here, releases the lock and
/// then performs the returned action. Exactly-once is structural: the continuation and the
/// legacy call's `Cancellation` are moved out of the state by the event that uses them, so no
/// second path can find them.
@usableFromInline
struct SingleShotStateMachine<Success, Failure: Error> {
    @usableFromInline typealias Continuation = UnsafeContinuation<Result<Success, Failure>, any Error>

    @usableFromInline
    enum Phase {
        /// Entered at creation. Left by `start` (→ awaiting) or `cancel` (→ cancelledBeforeStart).
        case notStarted
        /// The task was cancelled before the body ran; `start` resumes with `CancellationError`
        /// and the body never runs.
        case cancelledBeforeStart
        /// The body has run or is running; the task is suspended on `continuation`.
        /// Left by the first of callback, cancel, timeout or dropped callback.
        case awaiting(Continuation)
        /// Terminal: the continuation has been resumed. `ending` says by what.
        case resumed(Ending)
    }

    @usableFromInline
    enum Ending: Equatable { case completed, cancelled, timedOut, dropped, bodyThrew }

    /// The `Cancellation` the body returns for the legacy call.
    @usableFromInline
    enum Token {
        /// The body has not returned yet.
        case pending
        /// The body returned this token (nil: not cancellable) and it has not run.
        case held(Cancellation?)
        /// Cancelled while the body was still running: run the token as soon as it is returned.
        case cancelWhenReturned
        /// Run, or no longer needed.
        case spent
    }

    @usableFromInline var phase: Phase = .notStarted
    @usableFromInline var token: Token = .pending
    @usableFromInline var callbackCalls = 0
    /// The timeout's task, on the owned-task core: cancelled by whichever event ends the bridge
    /// first (moved out here, so exactly one path cancels it).
    @usableFromInline var timeout: OwnedTask?
    /// Takes a token no longer needed (the legacy call finished, or dropped its handler). The
    /// event hands it to its caller, which releases it after the bridge's (striped) lock: the
    /// token's closure may hold the last reference to user objects, whose deinit must not run
    /// under the lock. Not kept until the bridge is freed either: a token whose closure holds
    /// what holds `done` would make a cycle through the bridge and leak it.
    @inlinable
    mutating func takeHeldToken() -> Cancellation? {
        guard case .held(let cancellation) = token else { return nil }
        token = .spent
        return cancellation
    }

    @inlinable init() {}

    // MARK: - Start

    @usableFromInline
    enum StartAction { case runBody, resumeCancelled(Continuation) }

    @inlinable
    mutating func start(_ continuation: Continuation) -> StartAction {
        switch phase {
        case .notStarted:
            phase = .awaiting(continuation)
            return .runBody
        case .cancelledBeforeStart:
            phase = .resumed(.cancelled)
            token = .spent
            return .resumeCancelled(continuation)
        case .awaiting, .resumed:
            preconditionFailure("Internal inconsistency: single-shot bridge started twice (\(phase))")
        }
    }

    // MARK: - Body returned

    @inlinable
    mutating func bodyReturned(_ cancellation: Cancellation?) -> Cancellation? {
        switch token {
        case .pending:
            if case .awaiting = phase {
                token = .held(cancellation)
            } else {
                // Completed (or the callback was dropped) while the body ran: nothing to cancel.
                token = .spent
            }
            return nil
        case .cancelWhenReturned:
            token = .spent
            return cancellation
        case .held, .spent:
            preconditionFailure("Internal inconsistency: body returned twice (\(token))")
        }
    }

    /// The body threw before handing the callback to anything that will call it.
    @inlinable
    mutating func bodyThrew() -> Continuation? {
        token = .spent
        guard case .awaiting(let continuation) = phase else { return nil }
        phase = .resumed(.bodyThrew)
        return continuation
    }

    // MARK: - Callback

    @usableFromInline
    enum CallbackAction {
        /// `retired`: the token, no longer needed, to release outside the lock.
        case resume(Continuation, Result<Success, Failure>, cancelTimeout: OwnedTask?, retired: Cancellation?)
        /// The bridge already ended by cancellation or timeout; hand the result to `onLateResult`.
        case deliverLate(Result<Success, Failure>)
        /// A second call: ignore it and report the misuse (every extra call; the diagnostics ledger
        /// delivers the first and counts the rest).
        case reportSecondCall(report: Bool)
    }

    @inlinable
    mutating func callback(_ result: Result<Success, Failure>) -> CallbackAction {
        callbackCalls += 1
        if callbackCalls > 1 { return .reportSecondCall(report: true) }
        switch phase {
        case .awaiting(let continuation):
            phase = .resumed(.completed)
            let retired = takeHeldToken()  // the legacy call finished: nothing to cancel
            let timeout = self.timeout
            self.timeout = nil
            return .resume(continuation, result, cancelTimeout: timeout, retired: retired)
        case .resumed:
            return .deliverLate(result)
        case .notStarted, .cancelledBeforeStart:
            preconditionFailure("Internal inconsistency: callback before the body ran (\(phase))")
        }
    }

    // MARK: - Cancel and timeout

    @usableFromInline
    enum InterruptAction {
        case none
        case resume(Continuation, cancelLegacyCall: Cancellation?, cancelTimeout: OwnedTask?)
    }

    /// Task cancellation (`timedOut == false`) or the timeout elapsing (`timedOut == true`).
    @inlinable
    mutating func interrupt(timedOut: Bool) -> InterruptAction {
        switch phase {
        case .notStarted:
            if !timedOut { phase = .cancelledBeforeStart }
            return .none
        case .cancelledBeforeStart, .resumed:
            return .none
        case .awaiting(let continuation):
            phase = .resumed(timedOut ? .timedOut : .cancelled)
            var legacy: Cancellation?
            switch token {
            case .pending: token = .cancelWhenReturned
            case .held(let cancellation): token = .spent; legacy = cancellation
            case .cancelWhenReturned, .spent: break
            }
            let timeout = self.timeout
            self.timeout = nil
            return .resume(continuation, cancelLegacyCall: legacy, cancelTimeout: timedOut ? nil : timeout)
        }
    }

    // MARK: - Dropped callback

    @usableFromInline
    enum DroppedAction {
        case none
        case resumeDropped(Continuation, cancelTimeout: OwnedTask?, retired: Cancellation?)
    }

    /// The legacy API released the callback. Only a drop while awaiting is an error: after
    /// cancellation many APIs release their handler without calling it, which is fine.
    @inlinable
    mutating func callbackReleased() -> DroppedAction {
        guard callbackCalls == 0, case .awaiting(let continuation) = phase else { return .none }
        phase = .resumed(.dropped)
        let retired = takeHeldToken()
        let timeout = self.timeout
        self.timeout = nil
        return .resumeDropped(continuation, cancelTimeout: timeout, retired: retired)
    }

    // MARK: - Timeout

    /// Stores the timeout's owned task before its Task exists; false when the bridge already
    /// ended (then no Task is started at all). A bridge that ends later cancels it: before the
    /// Task is attached the core remembers that, and cancels the Task on attach.
    @inlinable
    mutating func setTimeout(_ owned: OwnedTask) -> Bool {
        guard case .awaiting = phase else { return false }
        timeout = owned
        return true
    }
}
