/// A token that cancels something: a legacy request, a subscription, a task.
///
/// - `cancel()` runs the action at most once, whichever thread calls it and however often.
/// - It is thread-safe and `Sendable`, and never runs the action while a lock of Bridges is held.
/// - **Where the action runs.** A token made in an actor's isolation (a `@MainActor` view model,
///   an actor's method, a stream builder written there) remembers that actor and runs its action
///   there, so the action may use that actor's non-`Sendable` state: a legacy request handle, a
///   manager with a weak delegate. `cancel()` enqueues such an action on its actor and returns
///   at once; the action runs when the actor next gets to it (on the main actor, before any
///   main-actor job enqueued after `cancel()`), so after the code that called `cancel()` on that
///   actor has returned or suspended, and in any case before a ``CallbackStream``'s builder runs
///   on that actor (a source this token stops is stopped before a stream starts it again there). A token made in
///   nonisolated code takes an action it can own outright (`sending`: it captures only `Sendable`
///   values, or values nothing else uses afterwards) and runs it on the thread that calls
///   `cancel()`, before `cancel()` returns.
/// - Unlike Combine's `AnyCancellable`, dropping a `Cancellation` does not cancel: hold it in a
///   ``CancellationBag`` (which cancels when its owner dies) or call ``cancel()``.
///
/// ```swift
/// @MainActor final class ForecastViewModel {
///     let client: LegacyWeatherClient
///     init(client: LegacyWeatherClient) { self.client = client }
///     func forecast(_ city: String) async throws -> Forecast {
///         try await withCallback { done in
///             let request = client.fetchForecast(city: city, completion: done)
///             return Cancellation { request.cancel() }  // runs on the main actor
///         }
///     }
/// }
/// ```
public final class Cancellation: @unchecked Sendable, Hashable, CustomStringConvertible {
    // @unchecked Sendable: `action`, `isolation` and `cancelled` are read and written only with
    // this object's stripe held (`Lock.striped(for:)`, a shared, never-freed table: a token
    // allocates no lock of its own, so `Cancellation {}` is one allocation and no mutex
    // init/destroy). The action is not `Sendable`, and is still only ever called where it may
    // run: on `isolation` when it has one (the actor whose region it was made in: see `run`),
    // and otherwise anywhere, because the initializer took it `sending` (no one else has it).

    /// The action, until `cancel()` takes it (exactly once: moved out under the lock).
    @usableFromInline @exclusivity(unchecked) var action: (() -> Void)?
    /// The actor the action belongs to, nil for an action made in nonisolated code.
    @usableFromInline @exclusivity(unchecked) var isolation: (any Actor)?
    /// Terminal once true.
    @usableFromInline @exclusivity(unchecked) var cancelled = false

    /// A token that runs `action` the first time it is cancelled, in the isolation it was made in
    /// (see "Where the action runs" above).
    ///
    /// - Parameters:
    ///   - isolation: The actor the action belongs to (filled in by `#isolation`); leave the default.
    ///   - action: What cancelling does. Made on an actor, it may capture that actor's
    ///     non-`Sendable` state; made in nonisolated code, it must be `Sendable` or own what it
    ///     captures.
    @inlinable
    public init(isolation: isolated (any Actor)? = #isolation, _ action: @escaping () -> Void) {
        self.action = action
        self.isolation = isolation
    }

    /// A token with nothing to cancel; it still records ``isCancelled``.
    @inlinable
    public init() {
        self.action = nil
        self.isolation = nil
    }

    /// A token that cancels every one of `tokens`, in order, in the isolation it was made in: made
    /// on an actor, the tokens made on that same actor run there and then, in the combined
    /// token's action (a stream's teardown assembled from a `@MainActor` view model's tokens
    /// stops the manager before the loop's next statement, as one token would).
    ///
    /// - Parameters:
    ///   - isolation: The actor the combined action belongs to (filled in by `#isolation`); leave
    ///     the default.
    ///   - tokens: What cancelling cancels, in order.
    public convenience init(isolation: isolated (any Actor)? = #isolation, combining tokens: [Cancellation]) {
        let actor = isolation
        self.init(isolation: isolation) { for token in tokens { token.cancel(runningOn: actor) } }
    }

    /// Whether ``cancel()`` has been called.
    public var isCancelled: Bool {
        Lock.striped(for: self).withLock { cancelled }
    }

    /// Runs the action if this is the first call; otherwise does nothing.
    ///
    /// An action made in nonisolated code runs here, before this returns. An action made on an
    /// actor is enqueued on that actor and runs there after this returns.
    public func cancel() {
        let taken: (action: () -> Void, isolation: (any Actor)?)? = Lock.striped(for: self).withLock {
            guard !cancelled else { return nil }
            cancelled = true
            guard let action = self.action else { return nil }
            let taken = (action, self.isolation)
            self.action = nil
            self.isolation = nil
            return taken
        }
        guard let taken else { return }
        guard let owner = taken.isolation else {
            taken.action()  // made in nonisolated code: runs on the thread that cancels (see the type's doc)
            return
        }
        Self.enqueueStoppingFirst(UnsafeAction(taken.action), on: owner)
    }

    /// The actor the action will run on, while it has not run: nil for an action made in
    /// nonisolated code, and once cancelled.
    @usableFromInline
    var pendingIsolation: (any Actor)? {
        Lock.striped(for: self).withLock { cancelled ? nil : isolation }
    }

    /// Cancels from code that runs on `actor` (or nonisolated code, nil): an action made on that
    /// same actor runs here and then; any other is run where ``cancel()`` runs it.
    func cancel(runningOn actor: (any Actor)?) {
        if let actor, pendingIsolation === actor {
            cancelHere()
        } else {
            cancel()
        }
    }

    /// Cancels, running the action here, on this thread, whatever actor it was made on: the caller
    /// is on that actor (a stream's teardown run by code that runs there; see `Teardown.runHere`).
    @usableFromInline
    func cancelHere() {
        let action: (() -> Void)? = Lock.striped(for: self).withLock {
            guard !cancelled else { return nil }
            cancelled = true
            defer {
                self.action = nil
                self.isolation = nil
            }
            return self.action
        }
        action?()
    }

    /// Runs `action` on `owner`, after the caller returns, through ``ActorTeardowns``: a stream
    /// builder about to run on `owner` runs it first (so a source a token stops is stopped before
    /// a stream started there again starts it).
    @usableFromInline
    static func enqueueStoppingFirst(_ action: UnsafeAction, on owner: any Actor) {
        ActorTeardowns.enqueue(on: owner) { action.run() }
    }

    /// Runs `action` on `owner`, after the caller returns: the job itself. On the main actor it is
    /// enqueued directly (a `@MainActor` task), so it runs before main-actor work enqueued after it.
    @usableFromInline
    static func enqueue(_ action: UnsafeAction, on owner: any Actor) {
        if owner === MainActor.shared {
            Task { @MainActor in action.run() }
        } else {
            Task { await run(action, on: owner) }
        }
    }

    @usableFromInline
    static func run(_ action: UnsafeAction, on owner: isolated any Actor) {
        action.run()
    }

    /// Keeps this token in `bag`, which cancels it when emptied or deallocated.
    public func store(in bag: CancellationBag) {
        bag.insert(self)
    }

    /// Keeps this token in a set, like `AnyCancellable.store(in:)`. The set does not cancel on
    /// its own: prefer ``store(in:)-(CancellationBag)`` when the owner's death should cancel.
    public func store(in set: inout Set<Cancellation>) {
        set.insert(self)
    }

    public static func == (lhs: Cancellation, rhs: Cancellation) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { isCancelled ? "Cancellation(cancelled)" : "Cancellation(active)" }
}

extension Task {
    /// A ``Cancellation`` that cancels this task.
    public var cancellation: Cancellation { Cancellation(isolation: nil) { self.cancel() } }
}

/// A ``Cancellation``'s action on its way to the actor it belongs to.
@usableFromInline
struct UnsafeAction: @unchecked Sendable {
    // @unchecked Sendable: it carries an action made in an actor's region to that same actor
    // (`Cancellation.enqueue`), and is run there once, never on the way.
    @usableFromInline let action: () -> Void
    @usableFromInline init(_ action: @escaping () -> Void) { self.action = action }
    @usableFromInline func run() { action() }
}
