/// A token that cancels something: a legacy request, a subscription, a task.
///
/// - `cancel()` runs the action at most once, whichever thread calls it and however often.
/// - It is thread-safe and `Sendable`; the action runs on the thread that calls `cancel()`,
///   never while a lock of Bridges is held.
/// - Unlike Combine's `AnyCancellable`, dropping a `Cancellation` does not cancel: hold it in a
///   ``CancellationBag`` (which cancels when its owner dies) or call ``cancel()``.
///
/// ```swift
/// let data = try await withCallback { done in
///     let task = session.dataTask(with: url) { data, _, error in done(data, error) }
///     task.resume()
///     return Cancellation { task.cancel() }
/// }
/// ```
public final class Cancellation: @unchecked Sendable, Hashable, CustomStringConvertible {
    // @unchecked Sendable: `action` and `cancelled` are read and written only with this object's
    // stripe held (`Lock.striped(for:)`, a shared, never-freed table: a token allocates no lock
    // of its own, so `Cancellation {}` is one allocation and no mutex init/destroy).

    /// The action, until `cancel()` takes it (exactly once: moved out under the lock).
    @usableFromInline @exclusivity(unchecked) var action: (@Sendable () -> Void)?
    /// Terminal once true.
    @usableFromInline @exclusivity(unchecked) var cancelled = false

    /// A token that runs `action` the first time it is cancelled.
    @inlinable
    public init(_ action: @escaping @Sendable () -> Void) {
        self.action = action
    }

    /// A token with nothing to cancel; it still records ``isCancelled``.
    @inlinable
    public init() {
        self.action = nil
    }

    /// A token that cancels `task`.
    @available(*, deprecated, message: "use task.cancellation")
    public convenience init<Success, Failure>(_ task: Task<Success, Failure>) {
        self.init { task.cancel() }
    }

    /// A token that cancels every one of `tokens`, in order.
    public convenience init(combining tokens: [Cancellation]) {
        self.init { for token in tokens { token.cancel() } }
    }

    /// A token that cancels every one of `tokens`, in order.
    @available(*, deprecated, message: "use Cancellation(combining: [a, b])")
    public static func combined(_ tokens: Cancellation...) -> Cancellation {
        Cancellation(combining: tokens)
    }

    /// Whether ``cancel()`` has been called.
    public var isCancelled: Bool {
        Lock.striped(for: self).withLock { cancelled }
    }

    /// Runs the action if this is the first call; otherwise does nothing.
    public func cancel() {
        let action: (@Sendable () -> Void)? = Lock.striped(for: self).withLock {
            guard !cancelled else { return nil }
            cancelled = true
            let action = self.action
            self.action = nil
            return action
        }
        action?()
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
    public var cancellation: Cancellation { Cancellation { self.cancel() } }
}
