// Sequence → callbacks: `sink`-style consumption of any AsyncSequence, for code not yet migrated.

extension AsyncSequence where Self: Sendable, Element: Sendable {
    /// Consumes the sequence in a new Task and hands each element to `onElement`, like Combine's
    /// `sink(receiveCompletion:receiveValue:)`.
    ///
    /// Before:
    /// ```swift
    /// facade.items.sink { [weak self] items in self?.render(items) }.store(in: &cancellables)
    /// ```
    /// After:
    /// ```swift
    /// facade.items.subscribe(on: .mainActor) { [weak self] items in self?.render(items) }.store(in: bag)
    /// ```
    ///
    /// - Delivery: `onElement` is called once per element, in order, one at a time (the loop waits
    ///   for each call to return before it asks for the next element, so a slow handler slows
    ///   the source instead of piling up work on a queue). With `.mainActor` the loop itself runs
    ///   on the main actor, so an isolation-aware source (`CallbackStream`) hands over buffered
    ///   elements without hopping.
    /// - `onFinish` is called at most once, after the last element: with `nil` when the sequence
    ///   finished, or the error it threw. It is **not** called when you cancel (as with Combine).
    /// - Cancelling the token cancels the Task, so the sequence's `next()` returns and its source
    ///   is torn down (a `CallbackStream` runs its teardown, an `AsyncStream` its `onTermination`).
    ///   Once `cancel()` has returned, no element is delivered that was not already being
    ///   delivered; cancel from the delivery queue or actor and none at all.
    ///
    /// - Once the subscription has ended by itself the token reads as cancelled and holds
    ///   nothing, so a ``CancellationBag`` drops it.
    /// - Important: Dropping the token does **not** cancel (unlike `AnyCancellable`): the
    ///   subscription then runs until the sequence ends. That is why the result is not
    ///   `@discardableResult`: the compiler warns when you ignore it. Keep it in the owner's
    ///   ``CancellationBag`` with `.store(in: bag)` (the owner's death then cancels it), or write
    ///   `_ =` to say "run to the end" on purpose. For handlers that need their owner, prefer
    ///   ``forEach(weak:in:isolation:lifetimeCheck:fileID:line:_:)``, which never keeps it alive.
    /// - Parameters:
    ///   - delivery: Where `onElement` and `onFinish` run. Default `.current`: on the iterating task.
    ///   - onElement: Called for each element.
    ///   - onFinish: Called once when the sequence ends by itself, with its error or `nil`.
    public func subscribe(
        on delivery: Delivery = .current,
        onElement: @escaping @Sendable (Element) -> Void,
        onFinish: @escaping @Sendable ((any Error)?) -> Void = { _ in }
    ) -> Cancellation {
        let state = LockedState<SubscriptionStateMachine>.create(SubscriptionStateMachine())
        let token = Cancellation { state.withLock { $0.cancel() }?.cancel() }
        let task: Task<Void, Never>
        if case .mainActor = delivery.kind {
            task = Task { @MainActor in
                await _subscriptionLoop(
                    self, isolation: MainActor.shared, state: state, delivery: .current,
                    onElement: onElement, onFinish: onFinish
                )
                token.cancel()  // marks the token done, so a bag drops it
            }
        } else {
            task = Task {
                await _subscriptionLoop(
                    self, isolation: nil, state: state, delivery: delivery,
                    onElement: onElement, onFinish: onFinish
                )
                token.cancel()
            }
        }
        if !state.withLock({ $0.attach(task) }) { task.cancel() }  // no-op if it already finished
        return token
    }
}

/// The loop behind `subscribe`, run in `isolation` so that `for await` asks an isolation-aware
/// source for elements without leaving that actor. `delivery` is `.current` when the loop already
/// runs where the caller wants its callbacks.
func _subscriptionLoop<S: AsyncSequence & Sendable>(
    _ sequence: S,
    isolation: isolated (any Actor)?,
    state: LockedState<SubscriptionStateMachine>,
    delivery: Delivery,
    onElement: @escaping @Sendable (S.Element) -> Void,
    onFinish: @escaping @Sendable ((any Error)?) -> Void
) async where S.Element: Sendable {
    var failure: (any Error)?
    do {
        for try await element in sequence {
            guard state.withLock({ $0.isActive }) else { break }
            if case .current = delivery.kind {
                onElement(element)
            } else {
                await delivery.deliverAndWait {
                    // Checked again where it runs: a cancel() made on the delivery queue wins.
                    if state.withLock({ $0.isActive }) { onElement(element) }
                }
            }
        }
    } catch {
        failure = error
    }
    guard state.withLock({ $0.finish() }) else { return }  // cancelled: no onFinish
    let error = failure
    delivery.deliver { onFinish(error) }
}
