/// Why a typed single-shot bridge failed: the legacy API's own typed error, or the bridge's.
///
/// `withCallback` cannot be `throws(MyError)`: besides the legacy API's failures it also ends
/// by cancellation, a timeout or a dropped handler, none of which is a `MyError`. So the typed
/// form throws this enum, which keeps `MyError` typed and names the other three exhaustively.
public enum CallbackFailure<Failure: Error>: Error {
    /// The legacy API reported this failure.
    case failure(Failure)
    /// The awaiting task was cancelled (the legacy call's `Cancellation` has run).
    case cancelled
    /// The bridge ended the wait: ``BridgeError/callbackDropped``, ``BridgeError/timedOut``.
    case bridge(BridgeError)
}

extension CallbackFailure: Equatable where Failure: Equatable {}

/// `withCallback` for a `Result<T, MyError>` handler, with typed throws.
///
/// <!-- snippet: body — in a method of a `@MainActor` view model with `weatherClient` (its handler: `Result<Forecast, WeatherError>`) -->
/// ```swift
/// do {
///     let forecast = try await withTypedCallback { done in weatherClient.forecast(for: "Oslo", completion: done) }
///     show(forecast)
/// } catch .failure(let error) {          // error: WeatherError, no cast
///     show(error)
/// } catch .cancelled {
///     return
/// } catch .bridge(let error) {
///     show(error)
/// }
/// ```
/// Same guarantees as `withCallback`.
@inlinable
public func withTypedCallback<Success, Failure: Error>(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    onLateResult: (@Sendable (Result<Success, Failure>) -> Void)? = nil,
    fileID: String = #fileID,
    line: UInt = #line,
    @LegacyCallBuilder _ body: (_ done: @escaping @Sendable (Result<Success, Failure>) -> Void) -> Cancellation?
) async throws(CallbackFailure<Failure>) -> Success {
    let result: Result<Success, Failure>
    do {
        result = try await _withCallbackCore(
            isolation: isolation, timeout: timeout, onLateResult: onLateResult, fileID: fileID, line: line, body
        )
    } catch let error as BridgeError {
        throw .bridge(error)
    } catch {
        throw .cancelled  // the core's only other failure, as the body here cannot throw
    }
    switch result {
    case .success(let value): return value
    case .failure(let error): throw .failure(error)
    }
}

/// Unavailable: catches bodies the ``LegacyCallBuilder`` can't take (`guard`, `do`/`catch`, `while`), which would drop a `Cancellation` they end with, and says what to write instead.
@_disfavoredOverload
@available(
    *, unavailable,
    message:
        "this body would drop a Cancellation it ends with: LegacyCallBuilder cannot take guard, do/catch or while. End the body with `return Cancellation { … }` if the legacy call can be cancelled, or `return nil` if it cannot (or write if/else instead of guard)"
)
public func withTypedCallback<Success, Failure: Error>(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    onLateResult: (@Sendable (Result<Success, Failure>) -> Void)? = nil,
    fileID: String = #fileID,
    line: UInt = #line,
    _ body: (_ done: @escaping @Sendable (Result<Success, Failure>) -> Void) -> Void
) async throws(CallbackFailure<Failure>) -> Success {
    fatalError("unavailable")
}
