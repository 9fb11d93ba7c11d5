@available(BridgesTypedSequence, *)
extension AsyncSequence where Self: Sendable, Element: Sendable {
    /// Runs `action` for each element, cancelling the action still running for the previous
    /// element when a new one arrives (Kotlin's `collectLatest`); returns when the upstream has
    /// finished and the last action has returned.
    ///
    /// Before (a hand-written cancel-previous loop, which races: the old task may still write
    /// its result after the new element arrived):
    /// <!-- snippet: body — in a method of a `@MainActor` view model with `queries` and `search(_:)` -->
    /// ```swift
    /// var current: Task<Void, Never>?
    /// for await query in queries { current?.cancel(); current = Task { await search(query) } }
    /// ```
    /// After:
    /// <!-- snippet: body — in a method of a `@MainActor` view model with `queries` and `search(_:)` -->
    /// ```swift
    /// await queries.collectLatest { query in await search(query) }
    /// ```
    ///
    /// Built on `mapLatest(_:)`: each action runs
    /// in its own task, off the caller's actor (an isolated closure hops to its actor). Cancelling
    /// the calling task cancels the upstream and the running action. Throws the upstream's failure.
    ///
    /// - Availability: this form, which throws the upstream's own `Failure` (nothing for a
    ///   sequence that cannot fail), needs `AsyncSequence.Failure` (macOS 15, iOS 18, tvOS 18,
    ///   watchOS 11, visionOS 2). Below, the same call resolves to the throwing form
    ///   (`async throws`, `any Error`).
    @inlinable
    public func collectLatest(
        fileID: String = #fileID,
        line: UInt = #line,
        _ action: @escaping @Sendable (Element) async -> Void
    ) async throws(Failure) {
        for try await _ in mapLatest(fileID: fileID, line: line, action) {}
    }
}

extension AsyncSequence where Self: Sendable, Element: Sendable {
    /// `collectLatest(_:)` with an action that throws: its first
    /// error (from the action of the newest element) ends the loop and is rethrown. Available at
    /// the package's floor; a non-throwing action takes this form where `AsyncSequence.Failure`
    /// is not available.
    @inlinable
    public func collectLatest(
        fileID: String = #fileID,
        line: UInt = #line,
        _ action: @escaping @Sendable (Element) async throws -> Void
    ) async throws {
        for try await _ in mapLatest(fileID: fileID, line: line, action) {}
    }

    /// `collectLatest` on behalf of `owner`, without keeping it alive between actions: composed
    /// over `forEach(weak:in:)`, so it ends, tearing the source down, when `owner` is deallocated
    /// (with its `bag`), and `bag.cancelAll()` also cancels the running action.
    ///
    /// Before (leaks the view model, and a stale search can overwrite a newer one):
    /// <!-- snippet: body — in a method of a `@MainActor` view model with `queries`, `results` and `search(_:)` -->
    /// ```swift
    /// var current: Task<Void, Never>?
    /// Task { for await query in queries { current?.cancel(); current = Task { self.results = await search(query) } } }
    /// ```
    /// After:
    /// <!-- snippet: body — in a method of a `@MainActor` view model with `queries`, `results`, `bag` and `search(_:)` -->
    /// ```swift
    /// queries.collectLatest(weak: self, in: bag) { owner, query in owner.results = await search(query) }
    /// ```
    ///
    /// - `action` runs where it was written (a closure in a `@MainActor` view model runs on the
    ///   main actor), in a task of its own per element; the action for the previous element is
    ///   cancelled when a new one arrives. If `owner` is gone when an element arrives, the action
    ///   is not called.
    /// - A running action holds `owner` (it receives it strongly) until it returns: releasing the
    ///   owner elsewhere meanwhile neither deallocates it nor cancels the action; once the action
    ///   returns, the owner goes, and with it the loop. For long work that must not keep the owner
    ///   alive, do the work before the owner is needed, and apply its result in `forEach(weak:in:)`:
    ///   `queries.mapLatest { await search($0) }.forEach(weak: self, in: bag) { $0.results = $1 }`
    ///   cancels the running search as soon as the owner is deallocated.
    /// - Requires a `Sendable` owner (a `@MainActor` class, an actor, a `Sendable` class), like
    ///   `forEach(weak:in:)`. The upstream's failure ends the loop (it is not reported).
    /// - Available at the package's floor.
    @discardableResult
    public func collectLatest<Owner: AnyObject & Sendable>(
        weak owner: Owner,
        in bag: CancellationBag,
        isolation: isolated (any Actor)? = #isolation,
        fileID: String = #fileID,
        line: UInt = #line,
        @_inheritActorContext _ action:
            @escaping @Sendable @isolated(any) (_ owner: Owner, _ element: Element) async -> Void
    ) -> Cancellation {
        let reference = WeakReference(owner)
        return _mapLatest(buffering: .unbounded, fileID: fileID, line: line, mapFailure: { $0 }) {
            element -> Result<Void, any Error> in
            guard let owner = reference.object else { return .success(()) }
            await action(owner, element)
            return .success(())
        }
        .forEach(weak: owner, in: bag, isolation: isolation, fileID: fileID, line: line) { _, _ in }
    }
}
