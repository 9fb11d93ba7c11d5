// Completion handler → async. One core (`_withCallbackCore`), thin adapters per callback shape.
//
// Every entry point promises:
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
    if case .returnResult(let result) = owner.unsafelyUnwrapped._bodyReturned(cancellation, handlerReleased: handlerReleased) {
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
                frame.startTimeout(timeout, isolation: isolation, anchor: anchor ?? SingleShotAnchor(owner.unsafelyUnwrapped))
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
        owned.attach(Task { [self] in
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

// MARK: - (Result<T, E>) -> Void

/// Bridges a completion-handler API whose handler takes a `Result` into `async`.
///
/// Before: `client.fetchUser(id) { result in … }`
/// After:  `let user = try await withCallback { done in client.fetchUser(id, completion: done) }`
///
/// Return a ``Cancellation`` from the body to make the legacy call cancellable:
/// ```swift
/// let user = try await withCallback { done in
///     let request = client.fetchUser(id, completion: done)
///     return Cancellation { request.cancel() }
/// }
/// ```
///
/// - Important: If the legacy API never calls back and releases the handler, this throws
///   ``BridgeError/callbackDropped`` instead of suspending forever. A second call is ignored and
///   reported through ``Diagnostics``. See the file header for cancellation and timeouts.
/// - Parameters:
///   - timeout: Gives up after this long with ``BridgeError/timedOut`` and cancels the legacy call.
///   - onLateResult: Receives a result that arrives after cancellation or timeout, so resources
///     it carries (files, handles) can be released. Called on the thread that called back.
///   - isolation: The caller's actor (filled in by `#isolation`); the body runs on it.
///   - fileID: Call site reported with any misuse; leave the default.
///   - line: Call site reported with any misuse; leave the default.
///   - body: Starts the legacy call, synchronously, in the caller's isolation.
/// - Throws: The legacy failure as is (`catch let error as MyError` works), `CancellationError`,
///   ``BridgeError``, or whatever the body throws.
@inlinable
public func withCallback<Success, Failure: Error>(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    onLateResult: (@Sendable (Result<Success, Failure>) -> Void)? = nil,
    fileID: String = #fileID,
    line: UInt = #line,
    @LegacyCallBuilder _ body: (_ done: @escaping @Sendable (Result<Success, Failure>) -> Void) throws -> Cancellation?
) async throws -> Success {
    try await _withCallbackCore(
        isolation: isolation, timeout: timeout, onLateResult: onLateResult, fileID: fileID, line: line, body
    ).get()
}

/// Unavailable: catches bodies the ``LegacyCallBuilder`` can't take (`guard`, `do`/`catch`, `while`), which would drop a `Cancellation` they end with, and says what to write instead. (A plain `Void` overload used to accept them with a deprecation warning.)
@_disfavoredOverload
@available(*, unavailable, message: "this body would drop a Cancellation it ends with: LegacyCallBuilder cannot take guard, do/catch or while. End the body with `return Cancellation { … }` if the legacy call can be cancelled, or `return nil` if it cannot (or write if/else instead of guard)")
public func withCallback<Success, Failure: Error>(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    onLateResult: (@Sendable (Result<Success, Failure>) -> Void)? = nil,
    fileID: String = #fileID,
    line: UInt = #line,
    _ body: (_ done: @escaping @Sendable (Result<Success, Failure>) -> Void) throws -> Void
) async throws -> Success {
    fatalError("unavailable")
}

// MARK: - (T?, Error?) -> Void

@inlinable
func _valueOrError<Success>(_ value: Success?, _ error: (any Error)?, site: CallSite) -> Result<Success, any Error> {
    if let error { return .failure(error) }
    if let value { return .success(value) }
    site.report(
        .callbackWithoutValueOrError,
        "a (value?, error?) completion handler was called with nil for both; the task throws BridgeError.missingValueAndError",
        bridge: nil  // the call completes the bridge; a later call is reported as callbackCalledTwice
    )
    return .failure(BridgeError.missingValueAndError)
}

/// Bridges an Objective-C-style `(T?, Error?)` completion handler into `async`.
///
/// Before: `session.dataTask(with: url) { data, _, error in … }`
/// After:
/// ```swift
/// let data = try await withCallback { done in
///     let task = session.dataTask(with: url) { data, _, error in done(data, error) }
///     task.resume()
///     return Cancellation { task.cancel() }
/// }
/// ```
/// An error wins over a value. Neither (both `nil`) throws ``BridgeError/missingValueAndError``
/// and is reported, where Swift's own import of such APIs would trap.
@inlinable
public func withCallback<Success>(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    onLateResult: (@Sendable (Result<Success, any Error>) -> Void)? = nil,
    fileID: String = #fileID,
    line: UInt = #line,
    @LegacyCallBuilder _ body: (_ done: @escaping @Sendable (Success?, (any Error)?) -> Void) throws -> Cancellation?
) async throws -> Success {
    let site = CallSite(fileID: fileID, line: line)
    return try await _withCallbackCore(
        isolation: isolation, timeout: timeout, onLateResult: onLateResult, fileID: fileID, line: line
    ) { done in try body { done(_valueOrError($0, $1, site: site)) } }.get()
}

/// Unavailable: catches bodies the ``LegacyCallBuilder`` can't take (`guard`, `do`/`catch`, `while`), which would drop a `Cancellation` they end with, and says what to write instead. (A plain `Void` overload used to accept them with a deprecation warning.)
@_disfavoredOverload
@available(*, unavailable, message: "this body would drop a Cancellation it ends with: LegacyCallBuilder cannot take guard, do/catch or while. End the body with `return Cancellation { … }` if the legacy call can be cancelled, or `return nil` if it cannot (or write if/else instead of guard)")
public func withCallback<Success>(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    onLateResult: (@Sendable (Result<Success, any Error>) -> Void)? = nil,
    fileID: String = #fileID,
    line: UInt = #line,
    _ body: (_ done: @escaping @Sendable (Success?, (any Error)?) -> Void) throws -> Void
) async throws -> Success {
    fatalError("unavailable")
}

// MARK: - (T) -> Void

/// Bridges a completion handler that always delivers a value, `(T) -> Void`, into `async`.
///
/// Before: `locator.currentPlace { place in … }`
/// After:  `let place = try await withCallback { done in locator.currentPlace(completion: done) }`
///
/// It still `throws`: cancellation, a timeout or a dropped handler end the wait.
@inlinable
public func withCallback<Success>(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    onLateResult: (@Sendable (Success) -> Void)? = nil,
    fileID: String = #fileID,
    line: UInt = #line,
    @LegacyCallBuilder _ body: (_ done: @escaping @Sendable (Success) -> Void) throws -> Cancellation?
) async throws -> Success {
    try await _withCallbackCore(
        isolation: isolation, timeout: timeout, onLateResult: _lateValue(onLateResult),
        fileID: fileID, line: line
    ) { (done: @escaping @Sendable (Result<Success, Never>) -> Void) in try body { done(.success($0)) } }.get()
}

/// Unavailable: catches bodies the ``LegacyCallBuilder`` can't take (`guard`, `do`/`catch`, `while`), which would drop a `Cancellation` they end with, and says what to write instead. (A plain `Void` overload used to accept them with a deprecation warning.)
@_disfavoredOverload
@available(*, unavailable, message: "this body would drop a Cancellation it ends with: LegacyCallBuilder cannot take guard, do/catch or while. End the body with `return Cancellation { … }` if the legacy call can be cancelled, or `return nil` if it cannot (or write if/else instead of guard)")
public func withCallback<Success>(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    onLateResult: (@Sendable (Success) -> Void)? = nil,
    fileID: String = #fileID,
    line: UInt = #line,
    _ body: (_ done: @escaping @Sendable (Success) -> Void) throws -> Void
) async throws -> Success {
    fatalError("unavailable")
}

// MARK: - (Error?) -> Void

/// Bridges a completion handler that reports only success or an error, `(Error?) -> Void`.
///
/// Before: `store.save(item) { error in … }`
/// After:  `try await withCallback { done in store.save(item, completion: done) }`
@inlinable
public func withCallback(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    onLateResult: (@Sendable ((any Error)?) -> Void)? = nil,
    fileID: String = #fileID,
    line: UInt = #line,
    @LegacyCallBuilder _ body: (_ done: @escaping @Sendable ((any Error)?) -> Void) throws -> Cancellation?
) async throws {
    try await _withCallbackCore(
        isolation: isolation, timeout: timeout,
        onLateResult: _lateError(onLateResult), fileID: fileID, line: line
    ) { (done: @escaping @Sendable (Result<Void, any Error>) -> Void) in
        try body { error in done(error.map { .failure($0) } ?? .success(())) }
    }.get()
}

/// Unavailable: catches bodies the ``LegacyCallBuilder`` can't take (`guard`, `do`/`catch`, `while`), which would drop a `Cancellation` they end with, and says what to write instead. (A plain `Void` overload used to accept them with a deprecation warning.)
@_disfavoredOverload
@available(*, unavailable, message: "this body would drop a Cancellation it ends with: LegacyCallBuilder cannot take guard, do/catch or while. End the body with `return Cancellation { … }` if the legacy call can be cancelled, or `return nil` if it cannot (or write if/else instead of guard)")
public func withCallback(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    onLateResult: (@Sendable ((any Error)?) -> Void)? = nil,
    fileID: String = #fileID,
    line: UInt = #line,
    _ body: (_ done: @escaping @Sendable ((any Error)?) -> Void) throws -> Void
) async throws {
    fatalError("unavailable")
}

// MARK: - () -> Void

/// Bridges a completion handler with no arguments, `() -> Void`: waits until it is called.
///
/// Before: `animator.run(completion: { … })`
/// After:  `try await withCallback { done in animator.run(completion: done) }`
@inlinable
public func withCallback(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    fileID: String = #fileID,
    line: UInt = #line,
    @LegacyCallBuilder _ body: (_ done: @escaping @Sendable () -> Void) throws -> Cancellation?
) async throws {
    try await _withCallbackCore(
        isolation: isolation, timeout: timeout, onLateResult: nil, fileID: fileID, line: line
    ) { (done: @escaping @Sendable (Result<Void, Never>) -> Void) in try body { done(.success(())) } }.get()
}

/// Unavailable: catches bodies the ``LegacyCallBuilder`` can't take (`guard`, `do`/`catch`, `while`), which would drop a `Cancellation` they end with, and says what to write instead. (A plain `Void` overload used to accept them with a deprecation warning.)
@_disfavoredOverload
@available(*, unavailable, message: "this body would drop a Cancellation it ends with: LegacyCallBuilder cannot take guard, do/catch or while. End the body with `return Cancellation { … }` if the legacy call can be cancelled, or `return nil` if it cannot (or write if/else instead of guard)")
public func withCallback(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    fileID: String = #fileID,
    line: UInt = #line,
    _ body: (_ done: @escaping @Sendable () -> Void) throws -> Void
) async throws {
    fatalError("unavailable")
}

@inlinable
func _lateValue<Success>(
    _ handler: (@Sendable (Success) -> Void)?
) -> (@Sendable (Result<Success, Never>) -> Void)? {
    guard let handler else { return nil }
    return { result in handler(result.get()) }
}

@inlinable
func _lateHandover<Success, Failure>(
    _ handler: (@Sendable (Result<Success, Failure>) -> Void)?
) -> (@Sendable (Result<Handoff<Success>, Failure>) -> Void)? {
    guard let handler else { return nil }
    return { result in handler(result.map(\.value)) }
}

@inlinable
func _lateError(_ handler: (@Sendable ((any Error)?) -> Void)?) -> (@Sendable (Result<Void, any Error>) -> Void)? {
    guard let handler else { return nil }
    return { result in handler(result.error) }
}

extension Result {
    @inlinable
    var error: Failure? {
        if case .failure(let error) = self { error } else { nil }
    }
}
