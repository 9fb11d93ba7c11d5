import Dispatch

// Async → completion handler: the reverse of `withCallback`, for callers not yet migrated.
//
// Every entry point promises:
// - the work runs in a new unstructured Task (in the caller's actor if the closure is isolated
//   to it, like `Task { }`); the returned ``Cancellation`` cancels that Task;
// - the completion handler is called exactly once: with the value, with the error the work threw,
//   or with `CancellationError` when `cancel()` came first (unless `whenCancelled: .doNotCall`,
//   then at most once). The first of "work finished" and "cancel() called" decides, and the
//   work's side of that race is decided where the handler runs (on the delivery queue or
//   actor), serialised against `cancel()` by the owned-task core (`OwnedTask`): once `cancel()`
//   has returned no call with the work's value or error starts, only (by default) the one call
//   with `CancellationError`; with `.doNotCall`, no call at all;
// - on cancel the handler is called (with `.current`) or enqueued (on a queue or the main
//   actor) inside `cancel()`, without waiting for the work to notice: work that ignores
//   cancellation cannot hold the caller up, and its late result is discarded. A `cancel()`
//   made while the handler runs on another thread returns once that call has returned;
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

/// The completion handler of one `withCompletion` bridge, until cancel or finish takes it. A
/// struct, not the optional function itself: a lock's state must not be a function type.
@usableFromInline
struct CompletionSlot<Success: Sendable> {
    @usableFromInline var handler: (@Sendable (Result<Success, any Error>) -> Void)?

    @usableFromInline init(handler: @escaping @Sendable (Result<Success, any Error>) -> Void) { self.handler = handler }

    /// The handler, leaving the slot empty.
    @usableFromInline mutating func take() -> (@Sendable (Result<Success, any Error>) -> Void)? {
        defer { handler = nil }
        return handler
    }
}

/// The one adapter: every handler shape adapts to `Result<Success, any Error>`, and the task
/// is an ``OwnedTask``.
@usableFromInline
func _withCompletionCore<Success: Sendable>(
    delivery: Delivery,
    whenCancelled: CancelledCompletion,
    completion: @escaping @Sendable (Result<Success, any Error>) -> Void,
    operation: sending @escaping @isolated(any) () async throws -> Success
) -> Cancellation {
    let core = OwnedTask()
    // The handler is moved out by whichever of cancel and finish wins, so a cancelled bridge
    // releases it (and what it captured) at once, even while the work ignores cancellation.
    let slot = LockedState(CompletionSlot(handler: completion))
    let token = Cancellation {
        // `cancel()` returns once no handler call is in progress on another thread.
        guard core.cancel() else { return }
        let completion = slot.withLock { $0.take() }
        guard whenCancelled.callsHandler, let completion else { return }  // else released here
        delivery.perform { completion(.failure(CancellationError())) }
    }
    core.attach(
        Task {
            let result: Result<Success, any Error>
            do {
                result = .success(try await operation())
            } catch {
                result = .failure(error)
            }
            // Decided where the handler runs: a cancel() made before this point wins.
            delivery.perform {
                core.finish {
                    let completion = slot.withLock { $0.take() }
                    completion?(result)
                }
                token.cancel()  // marks the token done; the core has ended, so nothing else runs
            }
        })
    return token
}

/// Runs async work for a caller that expects a `Result` completion handler, and returns a
/// ``Cancellation`` that cancels the work.
///
/// Keep an old signature alive on top of the new async implementation:
///
/// Before:
/// <!-- snippet: legacy-members — the legacy code (Swift 5) -->
/// ```swift
/// func load(completion: @escaping @Sendable (Result<[Item], Error>) -> Void) {
///     queue.async { /* hand-written loading, threading and error plumbing */ }
/// }
/// ```
/// After:
/// <!-- snippet: members — of a view model with `load() async throws -> [Item]` -->
/// ```swift
/// @discardableResult
/// func load(completion: @escaping @Sendable (Result<[Item], Error>) -> Void) -> Cancellation {
///     withCompletion(on: .queue(callbackQueue), completion) { try await self.load() }
/// }
/// ```
/// In a `@MainActor` type whose handlers are `@MainActor`, `on: .mainActor` takes them as they are:
/// <!-- snippet: members — of a `@MainActor` view model with `load() async throws -> [Item]` -->
/// ```swift
/// func load(completion: @escaping @MainActor (Result<[Item], Error>) -> Void) -> Cancellation {
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
@_disfavoredOverload  // `on: .mainActor` picks the `@MainActor` forms below
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
/// <!-- snippet: legacy-members — the legacy code (Swift 5) -->
/// ```swift
/// func fetchAvatar(completion: @escaping (Data?, Error?) -> Void) { legacyFetch(completion) }
/// ```
/// After:
/// <!-- snippet: members — of a `@MainActor` view model with `avatar() async throws -> Data` -->
/// ```swift
/// func fetchAvatar(completion: @escaping @Sendable (Data?, Error?) -> Void) {
///     withCompletion(on: .mainActor, completion) { try await self.avatar() }
/// }
/// ```
/// Delivery and cancellation are as for the `Result` form of `withCompletion`.
@discardableResult
@inlinable
@_disfavoredOverload  // `on: .mainActor` picks the `@MainActor` forms below
public func withCompletion<Success: Sendable>(
    on delivery: Delivery = .current,
    whenCancelled: CancelledCompletion = .callWithCancellationError,
    _ completion: @escaping @Sendable (Success?, (any Error)?) -> Void,
    @_inheritActorContext operation: sending @escaping @isolated(any) () async throws -> Success
) -> Cancellation {
    _withCompletionCore(
        delivery: delivery, whenCancelled: whenCancelled,
        completion: { result in
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
@_disfavoredOverload  // `on: .mainActor` picks the `@MainActor` forms below
public func withCompletion(
    on delivery: Delivery = .current,
    whenCancelled: CancelledCompletion = .callWithCancellationError,
    _ completion: @escaping @Sendable ((any Error)?) -> Void,
    @_inheritActorContext operation: sending @escaping @isolated(any) () async throws -> Void
) -> Cancellation {
    _withCompletionCore(
        delivery: delivery, whenCancelled: whenCancelled,
        completion: { result in
            switch result {
            case .success: completion(nil)
            case .failure(let error): completion(error)
            }
        }, operation: operation)
}

// MARK: - @MainActor handlers

/// `withCompletion` for a `@MainActor` completion handler: the form a `@MainActor` type uses to
/// keep its old completion-handler API on top of the new async one.
///
/// Before (legacy code, inside `@MainActor final class ProfileModel`):
/// <!-- snippet: legacy-members — the legacy code (Swift 5) -->
/// ```swift
/// func load(completion: @escaping @MainActor (Result<String, Error>) -> Void) {
///     api.fetch { result in DispatchQueue.main.async { completion(result) } }
/// }
/// ```
/// After:
/// <!-- snippet: members — of a `@MainActor` view model with `fetchTitle() async throws -> String` -->
/// ```swift
/// @discardableResult
/// func load(completion: @escaping @MainActor (Result<String, any Error>) -> Void) -> Cancellation {
///     withCompletion(on: .mainActor, completion) { try await self.fetchTitle() }
/// }
/// ```
/// `completion` runs on the main actor, exactly once (at most once with `.doNotCall`), and never
/// with the work's result once `cancel()` has returned. See the `Delivery` form for the rest.
@discardableResult
@inlinable
public func withCompletion<Success: Sendable>(
    on _: MainActorDelivery,
    whenCancelled: CancelledCompletion = .callWithCancellationError,
    _ completion: @escaping @MainActor (Result<Success, any Error>) -> Void,
    @_inheritActorContext operation: sending @escaping @isolated(any) () async throws -> Success
) -> Cancellation {
    // `Delivery.mainActor` runs the core's delivery on the main actor, so the handler is called
    // from there; `assumeIsolated` states that fact to the type checker (and checks it).
    _withCompletionCore(
        delivery: .mainActor, whenCancelled: whenCancelled,
        completion: { result in
            MainActor.assumeIsolated { completion(result) }
        }, operation: operation)
}

/// `withCompletion` for a `@MainActor` `(T?, Error?)` completion handler; see the `Result` form.
@discardableResult
@inlinable
public func withCompletion<Success: Sendable>(
    on _: MainActorDelivery,
    whenCancelled: CancelledCompletion = .callWithCancellationError,
    _ completion: @escaping @MainActor (Success?, (any Error)?) -> Void,
    @_inheritActorContext operation: sending @escaping @isolated(any) () async throws -> Success
) -> Cancellation {
    _withCompletionCore(
        delivery: .mainActor, whenCancelled: whenCancelled,
        completion: { result in
            MainActor.assumeIsolated {
                switch result {
                case .success(let value): completion(value, nil)
                case .failure(let error): completion(nil, error)
                }
            }
        }, operation: operation)
}

/// `withCompletion` for a `@MainActor` `(Error?)` completion handler; see the `Result` form.
@discardableResult
@inlinable
public func withCompletion(
    on _: MainActorDelivery,
    whenCancelled: CancelledCompletion = .callWithCancellationError,
    _ completion: @escaping @MainActor ((any Error)?) -> Void,
    @_inheritActorContext operation: sending @escaping @isolated(any) () async throws -> Void
) -> Cancellation {
    _withCompletionCore(
        delivery: .mainActor, whenCancelled: whenCancelled,
        completion: { result in
            MainActor.assumeIsolated { completion(result.error) }
        }, operation: operation)
}
