/// The state of one `withCallback` bridge: a pure value, no locks, no continuations resumed.
///
/// ``SingleShotStorage`` (or the frame's ``SingleShotFrame``) takes the lock, calls one
/// `mutating` event here, releases the lock and then performs the returned action. Exactly-once
/// is structural: the continuation, the result and the legacy call's `Cancellation` are moved
/// out of the state by the event that uses them, so no second path can find them.
///
/// The body runs *before* the awaiting task hands over a continuation, and with no cancellation
/// handler installed: a legacy API that calls back inside the body completes the bridge without
/// a suspension. While the body runs the frame holds a strong reference to the storage, so the
/// only event that can happen then is a callback; cancellation is looked at once the body has
/// returned (an already cancelled task runs its handler at once when it is installed).
@usableFromInline
struct SingleShotStateMachine<Success, Failure: Error> {
    @usableFromInline typealias Continuation = UnsafeContinuation<Result<Success, Failure>, any Error>

    @usableFromInline
    enum Phase {
        /// Entered at creation: the body is running. Left by `callback` (→ endedEarly),
        /// `bodyReturned` (→ returned) or `bodyThrew` (→ resumed).
        case running
        /// The body returned its token; no continuation yet. Left by `handOver` (→ awaiting) or
        /// by an ending that comes first (→ endedEarly).
        case returned
        /// Ended before the frame handed over a continuation; `bodyReturned`/`bodyThrew` or
        /// `handOver` picks the outcome up without suspending.
        case endedEarly(Outcome)
        /// The task is suspended on `continuation`. Left by the first of callback, cancel,
        /// timeout or dropped callback.
        case awaiting(Continuation)
        /// Terminal: the task has its outcome. `ending` says which.
        case resumed(Ending)
    }

    @usableFromInline
    enum Outcome {
        case result(Result<Success, Failure>)
        case ended(Ending)
    }

    @usableFromInline
    enum Ending: Equatable { case completed, cancelled, timedOut, dropped, bodyThrew }

    @usableFromInline var phase: Phase = .running
    /// The `Cancellation` the body returned for the legacy call, until it is run or retired.
    @usableFromInline var token: Cancellation?
    @usableFromInline var callbackCalls = 0
    /// The timeout's task, on the owned-task core: cancelled by whichever event ends the bridge
    /// first (moved out here, so exactly one path cancels it).
    @usableFromInline var timeout: OwnedTask?

    @inlinable init() {}

    /// Nothing left to release: the outcome, the token and the timeout were moved out. True once
    /// the task has its outcome (the frame asserts it before it lets go of the state, which is
    /// then never destroyed: see ``SingleShotStorage``).
    @inlinable
    var isSpent: Bool {
        guard case .resumed = phase else { return false }
        return token == nil && timeout == nil
    }

    /// Takes a token no longer needed (the legacy call finished, or dropped its handler). The
    /// event hands it to its caller, which releases it after the bridge's (striped) lock: the
    /// token's closure may hold the last reference to user objects, whose deinit must not run
    /// under the lock. Not kept until the bridge is freed either: a token whose closure holds
    /// what holds `done` would make a cycle through the bridge and leak it.
    @inlinable
    mutating func takeToken() -> Cancellation? {
        defer { token = nil }
        return token
    }

    @inlinable
    mutating func takeTimeout() -> OwnedTask? {
        defer { timeout = nil }
        return timeout
    }

    // MARK: - Body returned or threw

    @usableFromInline
    enum BodyAction {
        /// The legacy API called back inside the body: the task returns this at once.
        case returnResult(Result<Success, Failure>)
        /// Wait for the callback: hand over a continuation.
        case await
    }

    /// The body returned `cancellation`. Called by the frame, before any cancellation handler is
    /// installed and while it holds the storage: only a callback can have come first.
    @inlinable
    mutating func bodyReturned(_ cancellation: Cancellation?) -> BodyAction {
        switch phase {
        case .running:
            phase = .returned
            token = cancellation
            return .await
        case .endedEarly(.result(let result)):
            phase = .resumed(.completed)  // the token is not kept: the legacy call finished
            return .returnResult(result)
        case .returned, .endedEarly(.ended), .awaiting, .resumed:
            preconditionFailure("Internal inconsistency: single-shot body returned in \(phase)")
        }
    }

    /// The body threw. A result that came before wins (the task already had it, as when the
    /// callback resumes a suspended task); otherwise the task throws the body's error.
    @inlinable
    mutating func bodyThrew() -> Result<Success, Failure>? {
        switch phase {
        case .running:
            phase = .resumed(.bodyThrew)
            return nil
        case .endedEarly(.result(let result)):
            phase = .resumed(.completed)
            return result
        case .returned, .endedEarly(.ended), .awaiting, .resumed:
            preconditionFailure("Internal inconsistency: single-shot body threw in \(phase)")
        }
    }

    // MARK: - Hand over the continuation

    @usableFromInline
    enum HandOverAction {
        /// Stay suspended; start the timeout, if any.
        case suspend
        /// The bridge ended between the body's return and now: resume at once.
        case resume(Continuation, Outcome)
    }

    @inlinable
    mutating func handOver(_ continuation: Continuation) -> HandOverAction {
        switch phase {
        case .returned:
            phase = .awaiting(continuation)
            return .suspend
        case .endedEarly(let outcome):
            if case .ended(let ending) = outcome { phase = .resumed(ending) } else { phase = .resumed(.completed) }
            return .resume(continuation, outcome)
        case .running, .awaiting, .resumed:
            preconditionFailure("Internal inconsistency: single-shot continuation handed over in \(phase)")
        }
    }

    // MARK: - Callback

    @usableFromInline
    enum CallbackAction {
        /// `retired`: the token, no longer needed, to release outside the lock.
        case resume(Continuation, Result<Success, Failure>, cancelTimeout: OwnedTask?, retired: Cancellation?)
        /// Kept for the frame, which has not suspended yet; release `retired` outside the lock.
        case stored(retired: Cancellation?)
        /// The bridge already ended by cancellation or timeout; hand the result to `onLateResult`.
        case handLate(Result<Success, Failure>)
        /// A second call: ignore it and report the misuse (every extra call; the diagnostics ledger
        /// delivers the first and counts the rest).
        case reportSecondCall(report: Bool)
    }

    @inlinable
    mutating func callback(_ result: Result<Success, Failure>) -> CallbackAction {
        callbackCalls += 1
        if callbackCalls > 1 { return .reportSecondCall(report: true) }
        switch phase {
        case .running, .returned:
            phase = .endedEarly(.result(result))
            return .stored(retired: takeToken())  // the legacy call finished: nothing to cancel
        case .awaiting(let continuation):
            phase = .resumed(.completed)
            return .resume(continuation, result, cancelTimeout: takeTimeout(), retired: takeToken())
        case .endedEarly(.ended), .resumed:
            return .handLate(result)
        case .endedEarly(.result):
            preconditionFailure("Internal inconsistency: a first callback found a result already stored")
        }
    }

    // MARK: - Cancel and timeout

    @usableFromInline
    enum InterruptAction {
        case none
        /// Cancel the legacy call, then resume the task if it is suspended (otherwise the frame
        /// finds the ending when it hands over its continuation).
        case end(Continuation?, cancelLegacyCall: Cancellation?, cancelTimeout: OwnedTask?)
    }

    /// Task cancellation (`timedOut == false`) or the timeout elapsing (`timedOut == true`).
    @inlinable
    mutating func interrupt(timedOut: Bool) -> InterruptAction {
        let ending: Ending = timedOut ? .timedOut : .cancelled
        switch phase {
        case .returned:
            phase = .endedEarly(.ended(ending))
            return .end(nil, cancelLegacyCall: takeToken(), cancelTimeout: nil)
        case .awaiting(let continuation):
            phase = .resumed(ending)
            let timeout = takeTimeout()
            return .end(continuation, cancelLegacyCall: takeToken(), cancelTimeout: timedOut ? nil : timeout)
        case .endedEarly, .resumed:
            return .none
        case .running:
            preconditionFailure("Internal inconsistency: single-shot bridge interrupted while its body ran")
        }
    }

    // MARK: - Dropped callback

    @usableFromInline
    enum DroppedAction {
        case none
        /// Report the drop; resume the task if it is suspended (otherwise the frame finds the
        /// ending when it hands over its continuation).
        case dropped(Continuation?, cancelTimeout: OwnedTask?, retired: Cancellation?)
    }

    /// The legacy API released the callback. Only a drop while waiting is an error: after
    /// cancellation many APIs release their handler without calling it, which is fine.
    @inlinable
    mutating func callbackReleased() -> DroppedAction {
        guard callbackCalls == 0 else { return .none }
        switch phase {
        case .returned:
            phase = .endedEarly(.ended(.dropped))
            return .dropped(nil, cancelTimeout: nil, retired: takeToken())
        case .awaiting(let continuation):
            phase = .resumed(.dropped)
            return .dropped(continuation, cancelTimeout: takeTimeout(), retired: takeToken())
        case .endedEarly, .resumed:
            return .none
        case .running:
            preconditionFailure("Internal inconsistency: single-shot handler released while the frame held it")
        }
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

extension SingleShotStateMachine.Ending {
    /// What the awaiting task throws for an ending that is not a result.
    @inlinable
    var error: any Error {
        switch self {
        case .timedOut: BridgeError.timedOut
        case .dropped: BridgeError.callbackDropped
        case .cancelled, .completed, .bodyThrew: CancellationError()
        }
    }
}
