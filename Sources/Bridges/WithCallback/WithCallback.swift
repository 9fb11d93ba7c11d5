// Completion handler → async: one `withCallback` per callback shape, each a thin adapter over
// `_withCallbackCore` (Core/SingleShot/SingleShotAwait.swift), which keeps the promises listed there.

// MARK: - (Result<T, E>) -> Void

/// Bridges a completion-handler API whose handler takes a `Result` into `async`.
///
/// Before: `client.fetchUser(id) { result in … }`
/// After:  `let user = try await withCallback { done in client.fetchUser(id, completion: done) }`
///
/// Return a ``Cancellation`` from the body to make the legacy call cancellable:
/// <!-- snippet: body — in a method of a `@MainActor` view model with `client` and `id` -->
/// ```swift
/// let user = try await withCallback { done in
///     let request = client.fetchUser(id, completion: done)
///     return Cancellation { request.cancel() }
/// }
/// ```
///
/// - Important: If the legacy API never calls back and releases the handler, this throws
///   ``BridgeError/callbackDropped`` instead of suspending forever. A second call is ignored and
///   reported through ``Diagnostics``. See Core/SingleShot/SingleShotAwait.swift for cancellation and timeouts.
/// - Parameters:
///   - timeout: Gives up after this long with ``BridgeError/timedOut`` and cancels the legacy call.
///   - onLateResult: Receives a result that arrives after cancellation or timeout, so resources
///     it carries (files, handles) can be released. Called on the thread that called back.
///     Written here, before the body, a closure of several statements needs its parameter's type
///     (`{ (late: Result<User, any Error>) in … }`): the compiler reads it before the body that
///     fixes the type. Written after the body (`} onLateResult: { late in … }`) it needs none.
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

/// Unavailable: catches bodies the ``LegacyCallBuilder`` can't take (`guard`, `do`/`catch`,
/// `while`), which would drop a `Cancellation` they end with, and says what to write instead.
@_disfavoredOverload
@available(
    *, unavailable,
    message:
        "this body would drop a Cancellation it ends with: LegacyCallBuilder cannot take guard, do/catch or while. End the body with `return Cancellation { … }` if the legacy call can be cancelled, or `return nil` if it cannot (or write if/else instead of guard)"
)
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
        "a (value?, error?) completion handler was called with nil for both; the task throws "
            + "BridgeError.missingValueAndError. If (nil, nil) is a valid answer of this API (nothing found), bridge it "
            + "with the Result shape and map it yourself: done(error.map { .failure($0) } ?? .success(value)), "
            + "awaiting an optional value.",
        bridge: nil  // the call completes the bridge; a later call is reported as callbackCalledTwice
    )
    return .failure(BridgeError.missingValueAndError)
}

/// Bridges an Objective-C-style `(T?, Error?)` completion handler into `async`.
///
/// Before: `session.dataTask(with: url) { data, _, error in … }`
/// After:
/// <!-- snippet: body — in a method of a `@MainActor` view model with `session` and `url` -->
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

/// Unavailable: catches bodies the ``LegacyCallBuilder`` can't take (`guard`, `do`/`catch`,
/// `while`), which would drop a `Cancellation` they end with, and says what to write instead.
@_disfavoredOverload
@available(
    *, unavailable,
    message:
        "this body would drop a Cancellation it ends with: LegacyCallBuilder cannot take guard, do/catch or while. End the body with `return Cancellation { … }` if the legacy call can be cancelled, or `return nil` if it cannot (or write if/else instead of guard)"
)
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
///
/// Disfavored: for an `(Error?)` handler, `Success == (any Error)?` fits too, and an untyped
/// `onLateResult:` written before the body could bind this shape, returning the error as the
/// call's value instead of throwing it. The `(Error?)` shape wins there.
@_disfavoredOverload
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

/// Unavailable: catches bodies the ``LegacyCallBuilder`` can't take (`guard`, `do`/`catch`,
/// `while`), which would drop a `Cancellation` they end with, and says what to write instead.
@_disfavoredOverload
@available(
    *, unavailable,
    message:
        "this body would drop a Cancellation it ends with: LegacyCallBuilder cannot take guard, do/catch or while. End the body with `return Cancellation { … }` if the legacy call can be cancelled, or `return nil` if it cannot (or write if/else instead of guard)"
)
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

/// Unavailable: catches bodies the ``LegacyCallBuilder`` can't take (`guard`, `do`/`catch`,
/// `while`), which would drop a `Cancellation` they end with, and says what to write instead.
@_disfavoredOverload
@available(
    *, unavailable,
    message:
        "this body would drop a Cancellation it ends with: LegacyCallBuilder cannot take guard, do/catch or while. End the body with `return Cancellation { … }` if the legacy call can be cancelled, or `return nil` if it cannot (or write if/else instead of guard)"
)
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

/// Unavailable: catches bodies the ``LegacyCallBuilder`` can't take (`guard`, `do`/`catch`,
/// `while`), which would drop a `Cancellation` they end with, and says what to write instead.
@_disfavoredOverload
@available(
    *, unavailable,
    message:
        "this body would drop a Cancellation it ends with: LegacyCallBuilder cannot take guard, do/catch or while. End the body with `return Cancellation { … }` if the legacy call can be cancelled, or `return nil` if it cannot (or write if/else instead of guard)"
)
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
