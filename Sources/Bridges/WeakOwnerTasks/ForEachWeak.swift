// Weak-owner loops: consume a sequence on behalf of an object without keeping it alive.
//
// The handler is `sending @isolated(any)` with `@_inheritActorContext`, the same spelling as
// `Task.init`'s operation: a closure written in a `@MainActor` view model is main-actor isolated
// (so `owner.items = items` compiles without `await` in Swift 6), and it may capture non-Sendable
// state because it is sent into the Task, not shared. Reading `handler.isolation` crashes this
// compiler (6.3.1) in SILGen for generic element types, so the loop takes the caller's
// `#isolation` instead.

extension AsyncSequence where Self: Sendable, Element: Sendable {
    /// Consumes the sequence on behalf of `owner` without keeping `owner` alive, and ends (tearing
    /// the source down) when `owner` is deallocated.
    ///
    /// Before (leaks: the Task holds `self` until the endless sequence ends, i.e. never):
    /// <!-- snippet: body — in a method of a `@MainActor` view model with `facade` -->
    /// ```swift
    /// Task { for try await items in facade.items { self.items = items } }
    /// ```
    /// After:
    /// <!-- snippet: body — in a method of a `@MainActor` view model with `facade` and `bag` -->
    /// ```swift
    /// facade.items.forEach(weak: self, in: bag) { owner, items in owner.items = items }
    /// ```
    ///
    /// - The Task holds `owner` weakly. For each element it borrows `owner` strongly just for
    ///   that call of `handler` (also across the handler's own `await`s) and lets go before it
    ///   asks for the next element. If `owner` is gone when an element arrives, the loop ends
    ///   without calling `handler`.
    /// - The Task's ``Cancellation`` goes into `bag`. Give the owner its own
    ///   `let bag = CancellationBag()`: when the owner is deallocated, so is the bag, which
    ///   cancels the Task, so a loop suspended in `next()` waiting for an element that never comes
    ///   ends too, and the source is torn down (a `CallbackStream` runs its teardown whichever way
    ///   the loop ends; an `AsyncStream` runs `onTermination` when cancelled inside `next()` or
    ///   when released, not merely when the loop stops iterating it). The bag is
    ///   required because Swift cannot observe an arbitrary object's deallocation portably (there
    ///   are no associated objects on Linux): without it a quiet sequence would keep the Task and
    ///   its source alive after the owner died.
    /// - Isolation: the loop runs in the caller's isolation (`isolation`, by default
    ///   `#isolation`), and `handler` where it was written, like the body of `Task { }`. Called
    ///   from a `@MainActor` view model both are on the main actor: the handler may set the
    ///   owner's state without `await` or warnings, and an isolation-aware source
    ///   (`CallbackStream`) hands over buffered elements without hopping. `handler` is called
    ///   once per element, in order, one at a time. Inside an `actor` that is itself the owner,
    ///   the loop runs on the global executor instead (a Task running on the actor would hold it),
    ///   and the handler, which is not isolated to the actor, reaches it with `await owner.…`.
    /// - The loop also ends when the sequence finishes or throws, or when the token is cancelled
    ///   (`bag.cancelAll()`). This form drops a thrown failure: to observe it, pass `onFailure:`
    ///   (the overload below).
    /// - `cancel()` is final: once it has returned, no new call of `handler` starts. The token
    ///   is checked in the handler's own isolation, right before each call: a `cancel()` made
    ///   there (the owner's bag cancelled on the main actor) either comes first, and no call
    ///   starts, or after the call has started. `handler` is `async`, so a synchronous `cancel()`
    ///   does not wait for a call in progress (it could deadlock on the actor the handler
    ///   needs). A `cancel()` from another thread can cross the one call being started at that
    ///   moment: that call runs with its task already cancelled (`Task.isCancelled`, and
    ///   cancellable `await`s inside it throw), and none follows. Handlers that must never
    ///   overlap a `cancel()` from another thread belong in `subscribe(on:onElement:onFinish:)`,
    ///   whose synchronous handlers `cancel()` waits for.
    ///
    /// - Requires: a `Sendable` sequence with `Sendable` elements (stdlib `map`/`filter` over such
    ///   a sequence qualify), and a `Sendable` owner: a `@MainActor` class, an actor, or a
    ///   `Sendable` class. The handler may run in another isolation than the loop, so an element
    ///   that is not `Sendable` could be shared between them: a Swift 5 SDK's struct of plain
    ///   values is made `Sendable` once, in the app (MIGRATION.md, "Swift 6 with legacy types").
    /// - Parameters:
    ///   - owner: The object on whose behalf the sequence is consumed. Held weakly.
    ///   - bag: The owner's bag. Its deallocation (or `cancelAll()`) cancels the loop.
    ///   - isolation: Where the loop runs; leave the default.
    ///   - lifetimeCheck: Opt-in debug check, see ``OwnerLifetimeCheck``.
    ///   - handler: Receives the owner (strongly, for this call only) and the element. Use
    ///     `owner`, not `self`, inside: capturing `self` strongly would keep it alive again.
    ///   - fileID: Call site reported with any misuse; leave the default.
    ///   - line: Call site reported with any misuse; leave the default.
    /// - Returns: The token already stored in `bag`; cancel it to stop earlier. The result is
    ///   discardable because the bag already holds it. Once the loop has ended the token reads as
    ///   cancelled, so the bag drops it.
    @discardableResult
    public func forEach<Owner: AnyObject & Sendable>(
        weak owner: Owner,
        in bag: CancellationBag,
        isolation: isolated (any Actor)? = #isolation,
        lifetimeCheck: OwnerLifetimeCheck = .default,
        fileID: String = #fileID,
        line: UInt = #line,
        @_inheritActorContext _ handler:
            sending @escaping @isolated(any) (_ owner: Owner, _ element: Element) async -> Void
    ) -> Cancellation {
        _forEach(
            weak: owner, in: bag, isolation: isolation, lifetimeCheck: lifetimeCheck, fileID: fileID, line: line,
            handler: _OwnerHandler(handler), onFailure: nil)
    }

    /// Consumes the sequence on behalf of `owner` as
    /// ``forEach(weak:in:isolation:lifetimeCheck:fileID:line:_:)`` does, and hands a failure the
    /// sequence throws to `onFailure`.
    ///
    /// <!-- snippet: body — in a method of a `@MainActor` view model with `facade`, `bag`, `items` and `error` -->
    /// ```swift
    /// facade.items.forEach(weak: self, in: bag) { owner, items in
    ///     owner.items = items
    /// } onFailure: { owner, error in
    ///     owner.error = error
    /// }
    /// ```
    ///
    /// - `onFailure` is called at most once, after the last call of `handler`, where it was
    ///   written (like `handler`: on the main actor in a `@MainActor` view model), with the owner
    ///   borrowed strongly for that call. It is not called when the sequence finishes, when it
    ///   throws `CancellationError`, when the token was cancelled first (`cancel()` is final for
    ///   it too), or when the owner is already gone: then nobody is left to tell.
    /// - Everything else is as in the form without `onFailure:`.
    ///
    /// - Parameters:
    ///   - owner: The object on whose behalf the sequence is consumed. Held weakly.
    ///   - bag: The owner's bag. Its deallocation (or `cancelAll()`) cancels the loop.
    ///   - isolation: Where the loop runs; leave the default.
    ///   - lifetimeCheck: Opt-in debug check, see ``OwnerLifetimeCheck``.
    ///   - fileID: Call site reported with any misuse; leave the default.
    ///   - line: Call site reported with any misuse; leave the default.
    ///   - handler: Receives the owner (strongly, for this call only) and the element.
    ///   - onFailure: Receives the owner (strongly, for this call only) and the failure the
    ///     sequence threw.
    /// - Returns: The token already stored in `bag`; cancel it to stop earlier.
    @discardableResult
    public func forEach<Owner: AnyObject & Sendable>(
        weak owner: Owner,
        in bag: CancellationBag,
        isolation: isolated (any Actor)? = #isolation,
        lifetimeCheck: OwnerLifetimeCheck = .default,
        fileID: String = #fileID,
        line: UInt = #line,
        @_inheritActorContext _ handler:
            sending @escaping @isolated(any) (_ owner: Owner, _ element: Element) async -> Void,
        @_inheritActorContext onFailure:
            sending @escaping @isolated(any) (_ owner: Owner, _ error: any Error) async -> Void
    ) -> Cancellation {
        _forEach(
            weak: owner, in: bag, isolation: isolation, lifetimeCheck: lifetimeCheck, fileID: fileID, line: line,
            handler: _OwnerHandler(handler), onFailure: _OwnerHandler(onFailure))
    }

    /// Both forms of `forEach(weak:)`: the handlers arrive boxed (see `_OwnerHandler`), the box
    /// sent into the loop's Task, which alone holds it.
    func _forEach<Owner: AnyObject & Sendable>(
        weak owner: Owner,
        in bag: CancellationBag,
        isolation: isolated (any Actor)?,
        lifetimeCheck: OwnerLifetimeCheck,
        fileID: String,
        line: UInt,
        handler: _OwnerHandler<Owner, Element>,
        onFailure: _OwnerHandler<Owner, any Error>?
    ) -> Cancellation {
        let reference = WeakReference(owner)
        let (control, token) = WeakOwnerTask.make(
            check: lifetimeCheck, site: CallSite(fileID: fileID, line: line),
            ownerType: reference.typeName, what: "forEach(weak:) over \(Self.self)",
            ownerIsAlive: { reference.object != nil }
        )
        // Running on the owner's own actor would hold the owner for as long as the loop runs:
        // then the loop runs on the global executor and `handler` hops to its isolation per call.
        if _isolationIsOwner(owner, isolation) {
            control.attach(
                Task {
                    await _weakOwnerLoop(
                        self, isolation: #isolation, owner: reference, control: control, handler: handler,
                        onFailure: onFailure)
                    control.ended(token: token)
                })
        } else {
            control.attach(
                Task {
                    await _weakOwnerLoop(
                        self, isolation: isolation, owner: reference, control: control, handler: handler,
                        onFailure: onFailure)
                    control.ended(token: token)
                })
        }
        token.store(in: bag)  // after attach: see WeakOwnerTask.make
        return token
    }
}

/// The loop behind `forEach(weak:)`, run in `isolation` (the caller's, unless that is the owner
/// itself): no hop per element when the handler is isolated there and the source is
/// isolation-aware.
@usableFromInline
func _weakOwnerLoop<S: AsyncSequence & Sendable, Owner: AnyObject & Sendable>(
    _ sequence: S,
    isolation: isolated (any Actor)?,
    owner reference: WeakReference<Owner>,
    control: WeakOwnerTask,
    handler: _OwnerHandler<Owner, S.Element>,
    onFailure: _OwnerHandler<Owner, any Error>?
) async where S.Element: Sendable {
    do {
        for try await element in sequence {
            // Into the handler's isolation for the check and the call (no hop when the loop
            // already runs there, the usual case: both inherit the caller's).
            guard
                await _callOwnerHandler(
                    handler.call.isolation, element, to: reference, control: control, handler: handler)
            else {
                break
            }
        }
    } catch is CancellationError {
        // The bag cancelled us (or the source itself was cancelled): nothing failed.
    } catch {
        // The sequence failed: the loop ends, and `onFailure` (if any) hears of it in its own
        // isolation, under the same check as an element (token active, owner alive).
        if let onFailure {
            _ = await _callOwnerHandler(
                onFailure.call.isolation, error, to: reference, control: control, handler: onFailure)
        }
    }
}

/// One element: in the handler's own isolation, check the token, borrow the owner strongly for
/// one call of `handler`, then let go. A function of its own so that the strong reference
/// provably ends before the loop awaits the next element.
///
/// The check runs where the handler runs, right before it, with no hop in between: a `cancel()`
/// made in that isolation (the owner's bag cancelled on the main actor, the usual case) either
/// comes before the check, and no call starts, or after the call has started. Checked in the
/// loop's isolation instead, a handler isolated elsewhere would start after the hop, possibly
/// after such a cancel had returned. A `cancel()` from another thread can still cross the one
/// call being started (a sync `cancel()` cannot wait for an async handler without risking a
/// deadlock); that call sees its task cancelled, and no further call starts.
@inlinable
func _callOwnerHandler<Element: Sendable, Owner: AnyObject & Sendable>(
    _ isolation: isolated (any Actor)?,
    _ element: Element,
    to reference: WeakReference<Owner>,
    control: WeakOwnerTask,
    handler: _OwnerHandler<Owner, Element>
) async -> Bool {
    guard control.core.isActive else { return false }
    guard let owner = reference.object else {
        control.foundOwnerGone()
        return false
    }
    await handler.call(owner, element)
    return true
}

/// A weak-owner task's handler, carried into the isolation it declares. A class with the
/// function as a stored property, not a `Handoff` of it: as a generic argument an
/// `@isolated(any)` function type needs its runtime metadata, which exists only from macOS 15 /
/// iOS 18 (the compiler rejects it below), while a stored property of that type needs none.
///
/// Unchecked: the handler was `sending` into the task, which alone holds this box, and calls it
/// once at a time, in the handler's own isolation (`call.isolation`): the crossing
/// `await handler.call(…)` makes when it hops there.
@usableFromInline
final class _OwnerHandler<Owner, Element>: @unchecked Sendable {
    @usableFromInline let call: @isolated(any) (Owner, Element) async -> Void

    @inlinable
    init(_ call: @escaping @isolated(any) (Owner, Element) async -> Void) { self.call = call }
}
