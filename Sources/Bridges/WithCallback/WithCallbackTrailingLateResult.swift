// `withCallback { done in … } onLateResult: { late in … }`: the late-result handler written after
// the body, as a second trailing closure, for every shape that has one.
//
// Why: the type checker solves a call's closures left to right. Written before the body, an
// untyped multi-statement `onLateResult: { late in … }` is solved first, when nothing has yet
// said what `late` is (only the body's `done`, passed to the legacy call, does); such a call fails
// with the message of WithCallbackUntypedLateResult.swift's fallbacks. Written after the body,
// `late` takes the type the body fixed. Each overload here forwards to its leading-form twin in
// WithCallback.swift (or WithTypedCallback.swift).

/// The `Result<T, E>` form of `withCallback` with `onLateResult` written after the body, where
/// its parameter's type needs no spelling:
/// <!-- snippet: body — in a method of a `@MainActor` view model with `client` and `id` -->
/// ```swift
/// let user = try await withCallback { done in
///     let request = client.fetchUser(id, completion: done)
///     return Cancellation { request.cancel() }
/// } onLateResult: { late in
///     if case .success(let user) = late { print("\(user.name) arrived after the caller left") }
/// }
/// ```
@inlinable
public func withCallback<Success, Failure: Error>(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    fileID: String = #fileID,
    line: UInt = #line,
    @LegacyCallBuilder _ body: (_ done: @escaping @Sendable (Result<Success, Failure>) -> Void) throws -> Cancellation?,
    onLateResult: @escaping @Sendable (Result<Success, Failure>) -> Void
) async throws -> Success {
    try await withCallback(
        isolation: isolation, timeout: timeout, onLateResult: onLateResult, fileID: fileID, line: line, body)
}

/// The `(T?, Error?)` form of `withCallback` with `onLateResult` written after the body.
@inlinable
public func withCallback<Success>(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    fileID: String = #fileID,
    line: UInt = #line,
    @LegacyCallBuilder _ body: (_ done: @escaping @Sendable (Success?, (any Error)?) -> Void) throws -> Cancellation?,
    onLateResult: @escaping @Sendable (Result<Success, any Error>) -> Void
) async throws -> Success {
    try await withCallback(
        isolation: isolation, timeout: timeout, onLateResult: onLateResult, fileID: fileID, line: line, body)
}

/// The `(T)` form of `withCallback` with `onLateResult` written after the body.
@inlinable
public func withCallback<Success>(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    fileID: String = #fileID,
    line: UInt = #line,
    @LegacyCallBuilder _ body: (_ done: @escaping @Sendable (Success) -> Void) throws -> Cancellation?,
    onLateResult: @escaping @Sendable (Success) -> Void
) async throws -> Success {
    try await withCallback(
        isolation: isolation, timeout: timeout, onLateResult: onLateResult, fileID: fileID, line: line, body)
}

/// The `(Error?)` form of `withCallback` with `onLateResult` written after the body.
@inlinable
public func withCallback(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    fileID: String = #fileID,
    line: UInt = #line,
    @LegacyCallBuilder _ body: (_ done: @escaping @Sendable ((any Error)?) -> Void) throws -> Cancellation?,
    onLateResult: @escaping @Sendable ((any Error)?) -> Void
) async throws {
    try await withCallback(
        isolation: isolation, timeout: timeout, onLateResult: onLateResult, fileID: fileID, line: line, body)
}

/// `withTypedCallback` with `onLateResult` written after the body.
@inlinable
public func withTypedCallback<Success, Failure: Error>(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    fileID: String = #fileID,
    line: UInt = #line,
    @LegacyCallBuilder _ body: (_ done: @escaping @Sendable (Result<Success, Failure>) -> Void) -> Cancellation?,
    onLateResult: @escaping @Sendable (Result<Success, Failure>) -> Void
) async throws(CallbackFailure<Failure>) -> Success {
    try await withTypedCallback(
        isolation: isolation, timeout: timeout, onLateResult: onLateResult, fileID: fileID, line: line, body)
}
