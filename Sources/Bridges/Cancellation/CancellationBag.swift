/// Holds cancellation tokens for an owner and cancels them all when the owner lets go of it.
///
/// Give a view model or service a `let bag = CancellationBag()`: when the owner is deallocated
/// the bag is too, and every token in it is cancelled (legacy requests stop, subscriptions end,
/// weak-owner tasks finish). ``cancelAll()`` cancels and empties it earlier; the bag stays usable.
///
/// ```swift
/// @MainActor final class ViewModel {
///     let bag = CancellationBag()
///     var title = ""
///     init(feed: CallbackStream<String, Never>) {
///         feed.subscribe(on: .mainActor) { [weak self] in self?.title = $0 }.store(in: bag)
///     }
/// }
/// ```
public final class CancellationBag: Sendable, CustomStringConvertible {
    private struct State: Sendable {
        var tokens: [Cancellation] = []
        /// Tokens that were cancelled elsewhere are pruned when the array reaches this size.
        var pruneAt = 16
    }

    private let state = LockedState<State>(State())

    public init() {}

    deinit {
        // No other reference exists any more; the lock costs one uncontended pair.
        for token in state.withLock({ $0.tokens }) { token.cancel() }
    }

    /// Adds `token`. Tokens already cancelled are not kept.
    public func insert(_ token: Cancellation) {
        guard !token.isCancelled else { return }
        state.withLock { state in
            state.tokens.append(token)
            if state.tokens.count >= state.pruneAt {
                state.tokens.removeAll { $0.isCancelled }
                state.pruneAt = max(16, state.tokens.count * 2)
            }
        }
    }

    /// Cancels every token held and empties the bag.
    public func cancelAll() {
        let tokens = state.withLock { state in
            defer { state.tokens = [] }
            return state.tokens
        }
        for token in tokens { token.cancel() }
    }

    /// How many tokens the bag holds that are not yet cancelled.
    public var count: Int {
        state.withLock { $0.tokens.lazy.filter { !$0.isCancelled }.count }
    }

    public var isEmpty: Bool { count == 0 }

    public var description: String { "CancellationBag(\(count) active)" }
}
