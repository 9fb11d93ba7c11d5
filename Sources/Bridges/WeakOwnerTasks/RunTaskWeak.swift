// Weak-owner one-shot work: "load, then apply to the owner if it still exists".

/// Runs async work on behalf of `owner` without keeping it alive, then hands the result to
/// `apply` together with the owner, if the owner still exists.
///
/// Before (keeps the view model alive until the request ends, then writes to a screen nobody sees):
/// <!-- snippet: body — in a method of a `@MainActor` view model with `api` -->
/// ```swift
/// Task { self.items = try await api.loadItems() }
/// ```
/// After:
/// <!-- snippet: body — in a method of a `@MainActor` view model with `api` and `bag` -->
/// ```swift
/// runTask(weak: self, in: bag) {
///     try await api.loadItems()
/// } then: { owner, result in
///     owner.items = (try? result.get()) ?? []
/// }
/// ```
///
/// - `operation` does not receive the owner, so it cannot keep it alive while it awaits; do not
///   capture `self` in it either. Like the body of `Task { }`, it runs on the caller's actor
///   when written in an actor-isolated context.
/// - The Task's ``Cancellation`` is stored in `bag`: when the owner (and with it its bag) is
///   deallocated, the Task is cancelled, so a cancellable `operation` stops early.
/// - `apply` is called at most once, after `operation` returned or threw, with the owner
///   borrowed strongly for that call, and only if the owner is still alive and the token was not
///   cancelled. It runs where it was written, like the body of `Task { }`: on the main actor for a
///   `@MainActor` view model, so it may set the owner's state without `await`.
/// - `cancel()` is final: once it has returned, `apply` does not start. The token is checked in
///   `apply`'s own isolation right before the call, so a `cancel()` made there (the usual case)
///   always wins or comes after the call started. A `cancel()` from another thread may cross the
///   call being started at that moment; `apply` then runs with its task already cancelled.
///   `cancel()` does not wait for a call in progress (`apply` is `async`).
///
/// - Parameters:
///   - owner: Held weakly.
///   - bag: The owner's bag; its deallocation or `cancelAll()` cancels the work.
///   - lifetimeCheck: Opt-in debug check, see ``OwnerLifetimeCheck``.
///   - operation: The work. Its error (including `CancellationError`) reaches `apply` as `.failure`.
///   - apply: Receives the owner and the result.
///   - line: Call site reported with any misuse; leave the default.
///   - fileID: Call site reported with any misuse; leave the default.
///   - isolation: The caller's actor (filled in by `#isolation`).
/// - Returns: The token already stored in `bag`.
@discardableResult
public func runTask<Owner: AnyObject & Sendable, Success: Sendable>(
    weak owner: Owner,
    in bag: CancellationBag,
    isolation: isolated (any Actor)? = #isolation,
    lifetimeCheck: OwnerLifetimeCheck = .default,
    fileID: String = #fileID,
    line: UInt = #line,
    @_inheritActorContext operation: sending @escaping @isolated(any) () async throws -> Success,
    @_inheritActorContext then apply:
        sending @escaping @isolated(any) (_ owner: Owner, _ result: Result<Success, any Error>) async -> Void
) -> Cancellation {
    let reference = WeakReference(owner)
    let (control, token) = WeakOwnerTask.make(
        check: lifetimeCheck, site: CallSite(fileID: fileID, line: line),
        ownerType: reference.typeName, what: "runTask(weak:) returning \(Success.self)",
        ownerIsAlive: { reference.object != nil }
    )
    // Running on the owner's own actor would hold the owner for the whole operation: then the
    // task runs on the global executor, and `operation` and `apply` hop to their own isolation.
    if _isolationIsOwner(owner, isolation) {
        control.attach(
            Task {
                await _weakOwnerOneShot(
                    isolation: #isolation, owner: reference, control: control, operation: operation, apply: apply)
                control.ended(token: token)
            })
    } else {
        control.attach(
            Task {
                await _weakOwnerOneShot(
                    isolation: isolation, owner: reference, control: control, operation: operation, apply: apply)
                control.ended(token: token)
            })
    }
    token.store(in: bag)  // after attach: see WeakOwnerTask.make
    return token
}

@usableFromInline
func _weakOwnerOneShot<Owner: AnyObject & Sendable, Success: Sendable>(
    isolation: isolated (any Actor)?,
    owner reference: WeakReference<Owner>,
    control: WeakOwnerTask,
    operation: @escaping @isolated(any) () async throws -> Success,
    apply: @escaping @isolated(any) (Owner, Result<Success, any Error>) async -> Void
) async {
    let result: Result<Success, any Error>
    do {
        result = .success(try await operation())
    } catch {
        result = .failure(error)
    }
    // Checked in `apply`'s own isolation, right before the call (see `_callOwnerHandler`): a cancel()
    // made there wins; one from another thread may cross the call being started, which then
    // sees its task cancelled.
    // Unchecked as in `_weakOwnerLoop`: `apply` is called once, in its own isolation.
    _ = await _callOwnerHandler(apply.isolation, result, to: reference, control: control, handler: _OwnerHandler(apply))
}
