// The single-shot core's awaiting frame: the one function every completion-handler shape adapts
// to (the shapes are `withCallback` and `withTypedCallback`, in WithCallback/), and the timeout.
//
// Every bridge built on it promises:
// - exactly once: the first call of `done` resumes the awaiting task; later calls are ignored
//   and reported once through ``Diagnostics`` (never a trap);
// - never hangs on a dropped handler: if the legacy API releases `done` without calling it, the
//   task throws ``BridgeError/callbackDropped``;
// - cancellation: when the awaiting task is cancelled, the `Cancellation` the body returned runs
//   exactly once and then the task resumes with `CancellationError` (if the task was cancelled
//   while the body ran, the token runs as soon as the body returns it, unless the legacy API
//   already called back inside the body: then the task returns that result, as it would had the
//   cancellation come a moment later). A task cancelled before the bridge starts never runs the
//   body. A result that arrives after cancellation or timeout goes to `onLateResult`;
// - `timeout:` ends the wait with ``BridgeError/timedOut`` and cancels the legacy call the same way,
//   in the caller's isolation (on the main actor for a `@MainActor` caller, so main-thread-only
//   APIs are cancelled on the main thread);
// - the body runs synchronously, in the caller's isolation; `done` may be called on any thread,
//   synchronously inside the body (the task then returns without suspending) or later;
// - values need not be `Sendable`: a legacy `User` class crosses from the thread that called
//   back to the awaiting caller, which then owns it (see ``Handoff``).

/// The core every shape adapts to: returns the legacy result, throws only the bridge's own
/// failures (cancellation, timeout, dropped callback, an error thrown by the body itself).
///
/// One allocation per call besides the body's own token: the ``SingleShotStorage`` is at once
/// the state, the completion handler's closure context and the witness that the handler was
/// released. This frame holds a strong reference to it only until the body has returned.
@inlinable
func _withCallbackCore<Success, Failure: Error>(
    isolation: isolated (any Actor)?,
    timeout: BridgeTimeout?,
    onLateResult: (@Sendable (Result<Success, Failure>) -> Void)?,
    fileID: String,
    line: UInt,
    _ body: (_ done: @escaping @Sendable (Result<Success, Failure>) -> Void) throws -> Cancellation?
) async throws -> Result<Success, Failure> {
    // A task cancelled before the bridge starts never runs the body.
    if Task.isCancelled { throw CancellationError() }
    // The value travels in a `Handoff`, so `Success` need not be `Sendable`. Sound because the
    // legacy API makes the value and passes it to its completion handler, and the bridge moves
    // it once from that call to the awaiting task (the continuation is resumed exactly once and
    // nothing else keeps the box): the assumption Swift makes when it imports an Objective-C
    // `(User?, Error?)` handler as `async -> User`. What it cannot see is a legacy API that keeps
    // the object and mutates it later (a shared cache): the docs of `withCallback` say so.
    typealias Storage = SingleShotStorage<Handoff<Success>, Failure>
    // The frame's strong reference: kept to the end if it turns out to be the last one when the
    // body has returned, otherwise given up then for an unowned `anchor` (see `Storage`).
    var owner: Storage? = Storage.make(
        onLateResult: _lateHandover(onLateResult), site: CallSite(fileID: fileID, line: line)
    )
    var anchor: SingleShotAnchor<Handoff<Success>, Failure>?
    let frame = owner.unsafelyUnwrapped.frame
    defer {
        frame.end()  // after the task has its outcome, and after `onCancel` can no longer run
        withExtendedLifetime(owner) {}  // what `onCancel` and `end()` read is valid until here
        withExtendedLifetime(anchor) {}
    }
    // The body runs first, in the caller's isolation, with no continuation and no cancellation
    // handler yet: a legacy API that calls back inside it ends the bridge without a suspension.
    let cancellation: Cancellation?
    do {
        // The handler takes a strong reference of its own (a temporary, gone when the body
        // returns); the frame keeps its own until the body's outcome is recorded, so an error
        // the body throws wins over the handler it drops, in every build.
        cancellation = try body(_completionHandler(owner.unsafelyUnwrapped))
    } catch {
        if let result = frame.bodyThrew() { return result.map(\.value) }
        throw error
    }
    // If the frame's reference is the last, no copy of `done` is left and none can appear:
    // "handler released" is decided with "body returned", and the object is kept to the end
    // (its deinit has nothing to do).
    let handlerReleased = isKnownUniquelyReferenced(&owner)
    if case .returnResult(let result) = owner.unsafelyUnwrapped._bodyReturned(
        cancellation, handlerReleased: handlerReleased)
    {
        return result.map(\.value)
    }
    if !handlerReleased {
        // From here on the handler's copies are the object's only owners, so its `deinit` means
        // "the legacy API released every copy of `done`"; the frame keeps only its memory.
        anchor = SingleShotAnchor(owner.unsafelyUnwrapped)
        owner = nil
    }
    // Cancellation is looked at from here: a task cancelled while the body ran runs `onCancel`
    // as soon as it is installed, which runs the body's token.
    return try await withTaskCancellationHandler {
        try await withUnsafeThrowingContinuation(isolation: isolation) { continuation in
            guard frame.handOver(continuation) else { return }  // ended meanwhile: resumed at once
            if let timeout {
                frame.startTimeout(
                    timeout, isolation: isolation, anchor: anchor ?? SingleShotAnchor(owner.unsafelyUnwrapped))
            }
        }
    } onCancel: {
        frame.interrupt(timedOut: false)
    }.map(\.value)
}

/// The completion handler: a closure whose only capture, and so whose context, is the storage.
@inlinable
func _completionHandler<Success, Failure>(
    _ storage: SingleShotStorage<Handoff<Success>, Failure>
) -> @Sendable (Result<Success, Failure>) -> Void {
    // The storage is not `Sendable` (a `ManagedBuffer` never is), but sharing it is safe: its
    // state machine is read and written only under its striped lock, its header is immutable,
    // and the results that cross threads are `Sendable` (`Handoff`). Captured as the class
    // itself, not wrapped: a closure whose one capture is a class reference uses the object as
    // its context, so the handler costs no allocation.
    nonisolated(unsafe) let storage = storage
    return { storage._callback($0.map(Handoff.init)) }
}

extension SingleShotFrame {
    /// The timeout: a thin adapter over the owned-task core (``OwnedTask``). It sleeps on the
    /// bridge's clock, then ends the wait and cancels the legacy call in `isolation`, the
    /// caller's (a `@MainActor` caller's legacy API is cancelled on the main actor, as it would
    /// be if the caller had cancelled it by hand).
    ///
    /// The core is stored in the state machine before its Task exists: an end of the bridge that
    /// comes before `attach` is remembered and cancels the Task on attach; the first of "the
    /// bridge ended" (`cancel()`) and "the timeout elapsed" (`finish()`) wins. Which of timeout,
    /// callback, cancellation and dropped handler ends the *bridge* is decided by the bridge's own
    /// state machine in `interrupt`, so `finish()` here needs no handler call serialised
    /// against `cancel()`: `cancel()` never waits on this core, and the callback path never blocks.
    ///
    /// The Task holds the bridge's memory by an unowned count of its own, never a strong
    /// reference: a pending timeout must not keep the handler's witness alive (a dropped handler
    /// still ends the wait at once, as ``BridgeError/callbackDropped``).
    @usableFromInline
    func startTimeout(_ timeout: BridgeTimeout, isolation: (any Actor)?, anchor: SingleShotAnchor<Success, Failure>) {
        let owned = OwnedTask()
        guard withLock({ $0.setTimeout(owned) }) else { return }  // ended while the body ran: no Task
        owned.attach(
            Task { [self] in
                defer { withExtendedLifetime(anchor) {} }  // its unowned count keeps the state valid
                do {
                    try await timeout.sleep()
                } catch {
                    return  // cancelled: the bridge ended first
                }
                await _run(in: isolation) {
                    guard owned.finish() else { return }  // the bridge ended while the clock fired
                    self.interrupt(timedOut: true)
                }
            })
    }
}

/// Runs `body` in `isolation` (a hop onto that actor, or the global executor for nil).
@usableFromInline
func _run(in isolation: isolated (any Actor)?, _ body: @Sendable () -> Void) async {
    body()
}

/// `onLateResult` as the core stores it: the value unwrapped from its `Handoff`.
@inlinable
func _lateHandover<Success, Failure>(
    _ handler: (@Sendable (Result<Success, Failure>) -> Void)?
) -> (@Sendable (Result<Handoff<Success>, Failure>) -> Void)? {
    guard let handler else { return nil }
    return { result in handler(result.map(\.value)) }
}
