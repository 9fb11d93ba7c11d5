import Dispatch

// Async → completion handler: the reverse of `withCallback`, for callers not yet migrated.
//
// Every entry point promises:
// - the work runs in a new unstructured Task (in the caller's actor if the closure is isolated
//   to it, like `Task { }`); the returned ``Cancellation`` cancels that Task;
// - the completion handler is called exactly once: with the value, with the error the work threw,
//   or with `CancellationError` when `cancel()` came first (unless `whenCancelled: .doNotCall`,
//   then at most once). The first of "work finished" and "cancel() called" decides; once
//   `cancel()` has returned, the handler can only see `CancellationError` (or nothing);
// - on cancel the handler is called at once, without waiting for the work to notice: a work
//   that ignores cancellation cannot hold the caller up, and its late result is discarded;
// - the handler runs where `on:` says (see ``Delivery``).

/// What a bridge does with its completion handler when the caller cancels.
public struct CancelledCompletion: Sendable, Hashable, CustomStringConvertible {
    @usableFromInline let callsHandler: Bool
    @inlinable init(callsHandler: Bool) { self.callsHandler = callsHandler }

    /// Call the completion handler with `CancellationError` (the default): every path ends with
    /// exactly one call, so "hide the spinner" code in the handler always runs.
    public static let callWithCancellationError = CancelledCompletion(callsHandler: true)

    /// Never call the completion handler once cancelled; it is released instead. For callers
    /// whose handler must not run after they gave up (like `URLSessionTask.cancel()` callers
    /// that ignore `NSURLErrorCancelled`).
    public static let doNotCall = CancelledCompletion(callsHandler: false)

    public var description: String { callsHandler ? "callWithCancellationError" : "doNotCall" }
}

/// The one core: every handler shape adapts to `Result<Success, any Error>`.
@inlinable
func _withCompletionCore<Success: Sendable>(
    delivery: Delivery,
    whenCancelled: CancelledCompletion,
    completion: @escaping @Sendable (Result<Success, any Error>) -> Void,
    operation: sending @escaping @isolated(any) () async throws -> Success
) -> Cancellation {
    let storage = CompletionStorage<Success>.create(CompletionStateMachine(completion))
    let task = Task {
        let result: Result<Success, any Error>
        do {
            result = .success(try await operation())
        } catch {
            result = .failure(error)
        }
        guard let completion = storage._finish() else { return }  // cancelled first: discard
        delivery.deliver { completion(result) }
    }
    return Cancellation {
        let completion = storage._cancel()
        task.cancel()
        guard let completion else { return }
        if whenCancelled.callsHandler {
            delivery.deliver { completion(.failure(CancellationError())) }
        }
        // Otherwise `completion` is released here, outside any lock.
    }
}

/// Runs async work for a caller that expects a `Result` completion handler, and returns a
/// ``Cancellation`` that cancels the work.
///
/// Keep an old signature alive on top of the new async implementation:
///
/// Before:
/// ```swift
/// func load(completion: @escaping @Sendable (Result<[Item], Error>) -> Void) {
///     queue.async { /* hand-written loading, threading and error plumbing */ }
/// }
/// ```
/// After:
/// ```swift
/// @discardableResult
/// func load(completion: @escaping @Sendable (Result<[Item], Error>) -> Void) -> Cancellation {
///     withCompletion(on: .mainActor, completion) { try await self.load() }
/// }
/// ```
///
/// - Parameters:
///   - delivery: Where `completion` runs: `.queue(q)`, `.mainActor` or `.current` (the default:
///     the thread the work finished on, or the thread that called `cancel()`).
///   - whenCancelled: ``CancelledCompletion/callWithCancellationError`` (default) or
///     ``CancelledCompletion/doNotCall``.
///   - completion: Called exactly once (at most once with `.doNotCall`): with the value, the
///     error the work threw, or `CancellationError` if `cancel()` came first.
///   - operation: The async work. Like `Task { }`, it runs on the caller's actor when written in
///     an actor-isolated context (a `@MainActor` view model), else on the global executor.
/// - Returns: A token whose `cancel()` cancels the Task and (by default) completes with
///   `CancellationError` at once. The result is discardable, deliberately: the old
///   `func load(completion:)` returned `Void`, and dropping the token does not cancel (see
///   ``Cancellation``), so fire-and-forget callers keep working.
@discardableResult
@inlinable
public func withCompletion<Success: Sendable>(
    on delivery: Delivery = .current,
    whenCancelled: CancelledCompletion = .callWithCancellationError,
    _ completion: @escaping @Sendable (Result<Success, any Error>) -> Void,
    @_inheritActorContext operation: sending @escaping @isolated(any) () async throws -> Success
) -> Cancellation {
    _withCompletionCore(delivery: delivery, whenCancelled: whenCancelled, completion: completion, operation: operation)
}

/// Runs async work for a caller that expects an Objective-C-style `(T?, Error?)` completion
/// handler, and returns a ``Cancellation`` that cancels the work.
///
/// Exactly one of the two arguments is non-nil: `(value, nil)` on success, `(nil, error)` on
/// failure, `(nil, CancellationError())` when cancelled (unless `whenCancelled: .doNotCall`).
///
/// Before:
/// ```swift
/// @objc func fetchAvatar(completion: @escaping (Data?, Error?) -> Void) { legacyFetch(completion) }
/// ```
/// After:
/// ```swift
/// @objc func fetchAvatar(completion: @escaping @Sendable (Data?, Error?) -> Void) {
///     withCompletion(on: .mainActor, completion) { try await self.avatar() }
/// }
/// ```
/// Delivery and cancellation are as for the `Result` form of `withCompletion`.
@discardableResult
@inlinable
public func withCompletion<Success: Sendable>(
    on delivery: Delivery = .current,
    whenCancelled: CancelledCompletion = .callWithCancellationError,
    _ completion: @escaping @Sendable (Success?, (any Error)?) -> Void,
    @_inheritActorContext operation: sending @escaping @isolated(any) () async throws -> Success
) -> Cancellation {
    _withCompletionCore(delivery: delivery, whenCancelled: whenCancelled, completion: { result in
        switch result {
        case .success(let value): completion(value, nil)
        case .failure(let error): completion(nil, error)
        }
    }, operation: operation)
}

/// Runs async work that returns nothing for a caller that expects an `(Error?) -> Void`
/// completion handler: `nil` on success, the error on failure, `CancellationError` when cancelled.
@discardableResult
@inlinable
public func withCompletion(
    on delivery: Delivery = .current,
    whenCancelled: CancelledCompletion = .callWithCancellationError,
    _ completion: @escaping @Sendable ((any Error)?) -> Void,
    @_inheritActorContext operation: sending @escaping @isolated(any) () async throws -> Void
) -> Cancellation {
    _withCompletionCore(delivery: delivery, whenCancelled: whenCancelled, completion: { result in
        switch result {
        case .success: completion(nil)
        case .failure(let error): completion(error)
        }
    }, operation: operation)
}
