// Sequence → callbacks: `sink`-style consumption of any AsyncSequence, for code not yet migrated.

extension AsyncSequence where Self: Sendable, Element: Sendable {
    /// Consumes the sequence in a new Task and hands each element to `onElement`, like Combine's
    /// `sink(receiveCompletion:receiveValue:)`.
    ///
    /// Before:
    /// <!-- snippet: legacy-body — the legacy code (Swift 5), with a Combine `facade.items` -->
    /// ```swift
    /// facade.items.sink { [weak self] items in self?.render(items) }.store(in: &cancellables)
    /// ```
    /// After:
    /// <!-- snippet: body — in a method of a `@MainActor` view model with `facade` and `bag` -->
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
    /// - `cancel()` is final: once it has returned, no `onElement` or `onFinish` call starts.
    ///   A call in progress on another thread is waited for (so `cancel()` may block for as long
    ///   as that call runs); a `cancel()` made from inside `onElement` returns at once, and no
    ///   further call is made.
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
    @_disfavoredOverload  // `on: .mainActor` picks the `@MainActor` form below
    public func subscribe(
        on delivery: Delivery = .current,
        onElement: @escaping @Sendable (Element) -> Void,
        onFinish: @escaping @Sendable ((any Error)?) -> Void = { _ in }
    ) -> Cancellation {
        let core = OwnedTask()
        let token = Cancellation { core.cancel() }
        if case .mainActor = delivery.kind {
            core.attach(
                Task { @MainActor in
                    await _mainActorSubscriptionLoop(
                        self, core: core, token: token, onElement: onElement, onFinish: onFinish)
                })
        } else {
            core.attach(
                Task {
                    await _subscriptionLoop(
                        self, core: core, token: token, delivery: delivery, onElement: onElement, onFinish: onFinish)
                })
        }
        return token
    }

    /// Consumes the sequence on the main actor and hands each element to `onElement` there: the
    /// form for `@MainActor` types, whose handlers may touch their state without `await`.
    ///
    /// ```swift
    /// @MainActor final class FeedViewModel {
    ///     var title = ""
    ///     let bag = CancellationBag()
    ///     func start(items: CallbackStream<String, Never>) {
    ///         items.subscribe(on: .mainActor) { item in self.title = item }.store(in: bag)
    ///     }
    /// }
    /// ```
    ///
    /// Same guarantees as `subscribe(on:onElement:onFinish:)`: one call at a
    /// time, in order; `onFinish` at most once and never after a cancel; once `cancel()` has
    /// returned no call starts. The loop runs on the main actor, so an isolation-aware source
    /// (`CallbackStream`) hands buffered elements over without a hop.
    /// - Important: The handlers capture what they use strongly (here `self`) until the
    ///   subscription ends: keep the token in the owner's bag, or use
    ///   ``forEach(weak:in:isolation:lifetimeCheck:fileID:line:_:)``.
    public func subscribe(
        on _: MainActorDelivery,
        onElement: @escaping @MainActor (Element) -> Void,
        onFinish: @escaping @MainActor ((any Error)?) -> Void = { _ in }
    ) -> Cancellation {
        let core = OwnedTask()
        let token = Cancellation { core.cancel() }
        core.attach(
            Task { @MainActor in
                await _mainActorSubscriptionLoop(
                    self, core: core, token: token, onElement: onElement, onFinish: onFinish)
            })
        return token
    }
}

/// The loop behind `subscribe(on: .mainActor)`: runs on the main actor, so `for await` asks an
/// isolation-aware source for elements without leaving it, and each handler call is direct.
@MainActor
func _mainActorSubscriptionLoop<S: AsyncSequence & Sendable>(
    _ sequence: S,
    core: OwnedTask,
    token: Cancellation,
    onElement: @MainActor (S.Element) -> Void,
    onFinish: @MainActor ((any Error)?) -> Void
) async where S.Element: Sendable {
    var failure: (any Error)?
    do {
        for try await element in sequence {
            // Checked after `next()`: a cancel made during the last call has been seen by the
            // sequence (an `AsyncStream` tears down when `next()` runs in a cancelled task).
            guard core.callHandler({ onElement(element) }) else { return }  // cancelled
        }
    } catch {
        failure = error
    }
    core.finish { onFinish(failure) }
    token.cancel()  // marks the token done (the core has finished: nothing else happens)
}

/// The loop behind `subscribe(on: .current)` and `.queue`: runs on the global executor. Each
/// call is made through the core where it runs (on the queue), so a cancel made in between wins.
func _subscriptionLoop<S: AsyncSequence & Sendable>(
    _ sequence: S,
    core: OwnedTask,
    token: Cancellation,
    delivery: Delivery,
    onElement: @escaping @Sendable (S.Element) -> Void,
    onFinish: @escaping @Sendable ((any Error)?) -> Void
) async where S.Element: Sendable {
    var failure: (any Error)?
    do {
        for try await element in sequence {
            // Checked after `next()` (see the main-actor loop), and again where the call runs.
            if case .current = delivery.kind {
                guard core.callHandler({ onElement(element) }) else { return }
            } else {
                guard core.isActive else { return }
                await delivery.performAndWait { _ = core.callHandler { onElement(element) } }
            }
        }
    } catch {
        failure = error
    }
    let error = failure
    delivery.perform {
        core.finish { onFinish(error) }
        token.cancel()
    }
}
