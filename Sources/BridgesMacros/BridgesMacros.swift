#if Macros
@_exported import Bridges

/// Writes the `async` overload of a completion-handler method through `withCallback`, with
/// every guarantee `withCallback` keeps.
///
/// <!-- snippet: compiled — Macros/Tests/BridgesMacrosTests/DocSnippets.swift#bridged (the Macros package compiles and tests it, in CI) -->
/// ```swift
/// final class UserClient {
///     let transport = UserTransport()
///
///     @Bridged
///     func fetchUser(id: Int, completion: @escaping (Result<User, APIError>) -> Void) -> Request {
///         transport.get(id, completion: completion)
///     }
/// }
/// // adds, beside it:
/// // func fetchUser(id: Int) async throws(CallbackFailure<APIError>) -> User
/// ```
///
/// The last parameter is the completion handler, in one of `withCallback`'s shapes:
/// `(Result<T, E>) -> Void`, `(T?, Error?) -> Void`, `(T) -> Void`, `(Error?) -> Void`,
/// `() -> Void`. The method returns `Void`, a `Cancellation`, or a handle with `cancel()`
/// (optional or not), which the overload cancels when the awaiting task is cancelled.
///
/// - A second call of the handler is ignored and reported; a dropped handler throws
///   ``BridgeError/callbackDropped``; cancellation reaches the returned handle.
/// - `Result<T, E>` with a concrete `E` gives `throws(CallbackFailure<E>)` (see
///   `withTypedCallback`); `Error` gives untyped `throws`.
/// - Access level, availability, global actor, generic parameters and `where` clause are kept.
/// - Outside an actor or a global-actor type the overload is `nonisolated(nonsending)`: it runs
///   in its caller's isolation, so a Swift 6 `@MainActor` caller awaits it on a non-`Sendable`
///   object. A type whose isolation is inferred (a subclass of a `@MainActor` class) needs its
///   global actor written on the method or the type.
/// - Parameter timeout: Gives up with ``BridgeError/timedOut`` and cancels the call, e.g.
///   `@Bridged(timeout: .after(.seconds(30)))`. Evaluated on each call; type-checked where the
///   attribute is, so it names static or global values, not the instance's.
@attached(peer, names: overloaded)
public macro Bridged(
    completion: String? = nil, timeout: BridgeTimeout? = nil, returnValue: BridgedReturnValue = .cancel
) =
    #externalMacro(module: "BridgesMacrosPlugin", type: "BridgedMacro")

/// `@Bridged` for a `success:`/`failure:` pair of closures, bridged as one result: the first
/// call of either ends the wait, with the value or the error.
///
/// A pair labelled `success…` and `…failure`/`…error` is found without this form; name the
/// closures when their labels say nothing (`@Bridged(success: "onDone", failure: "onProblem")`).
@attached(peer, names: overloaded)
public macro Bridged(
    success: String, failure: String, timeout: BridgeTimeout? = nil, returnValue: BridgedReturnValue = .cancel
) = #externalMacro(module: "BridgesMacrosPlugin", type: "BridgedMacro")

/// What the `async` form that ``Bridged(completion:timeout:returnValue:)`` writes does with the
/// value the legacy method returns.
public enum BridgedReturnValue: Sendable {
    /// Calls `cancel()` on it when the awaiting task is cancelled: a request handle, an
    /// operation, a `Cancellation`. The default.
    case cancel
    /// Calls `resume()` on it after the call, and `cancel()` when the task is cancelled: a task
    /// that starts suspended, such as the `URLSessionDataTask` of `dataTask(with:completionHandler:)`.
    case resumeAndCancel
    /// Leaves it: a request id, a flag. The call then cannot be cancelled; the wait still can.
    case ignore
}

/// `@Bridged` for every completion-handler method of a protocol or type, in one extension.
///
/// On a protocol, every conforming type gets the `async` forms. A method whose last parameter
/// is a function that `withCallback` cannot bridge is skipped with a warning at the attribute
/// saying why; mark it ``NotBridged()`` to silence it. Methods without a completion handler,
/// `async` methods and methods marked `@Bridged`, `@BridgedCompletion` or `@NotBridged` are
/// left alone (a remark lists them).
@attached(extension, names: arbitrary)
public macro BridgedAll(timeout: BridgeTimeout? = nil) =
    #externalMacro(module: "BridgesMacrosPlugin", type: "BridgedAllMacro")

/// Writes the completion-handler overload of an `async` method through `withCompletion`, for
/// callers not migrated yet (Objective-C, old modules).
///
/// <!-- snippet: compiled — Macros/Tests/BridgesMacrosTests/DocSnippets.swift#bridgedCompletion (the Macros package compiles and tests it, in CI) -->
/// ```swift
/// final class UserStore: Sendable {
///     let backend = UserBackend()
///
///     @BridgedCompletion(on: .mainActor)
///     func load(id: Int) async throws -> User {
///         try await backend.user(id: id)
///     }
/// }
/// // adds, beside it:
/// // @discardableResult
/// // func load(id: Int, completion: @escaping @MainActor (Result<User, any Error>) -> Void) -> Cancellation
/// ```
///
/// The handler is called exactly once (with `whenCancelled: .doNotCall`, at most once): with the
/// value, the error, or `CancellationError` when the returned token is cancelled first. A method
/// that returns nothing gets an `(Error?) -> Void` handler.
/// - Parameters:
///   - delivery: Where the handler runs (``Delivery``): `.current`, `.queue(q)`, or
///     `.mainActor`, which makes the handler `@MainActor`.
///   - whenCancelled: ``CancelledCompletion/callWithCancellationError`` (default) or
///     ``CancelledCompletion/doNotCall``.
@attached(peer, names: overloaded)
public macro BridgedCompletion(
    on delivery: Delivery = .current, whenCancelled: CancelledCompletion = .callWithCancellationError
) = #externalMacro(module: "BridgesMacrosPlugin", type: "BridgedCompletionMacro")

/// Leaves a method out of ``BridgedAll(timeout:)`` without a warning. Adds nothing.
@attached(peer)
public macro NotBridged() = #externalMacro(module: "BridgesMacrosPlugin", type: "NotBridgedMacro")
#endif
