#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine
import Bridges

/// A ``Cancellation`` is a Combine `Cancellable`, so `AnyCancellable(token)` wraps it and it
/// goes wherever Combine code keeps its cancellables.
extension Cancellation: Cancellable {}

extension Cancellation {
    /// A token that cancels `cancellable` (once, whichever thread cancels first).
    ///
    /// The token keeps the `AnyCancellable` alive, and `AnyCancellable` cancels when it is
    /// released: so, unlike other ``Cancellation``s, releasing this token cancels the subscription
    /// too. That keeps Combine's meaning of the value you converted; store the token (in a
    /// `CancellationBag`) for as long as the subscription should live.
    ///
    /// Before: `var cancellables = Set<AnyCancellable>()` next to a `CancellationBag`
    /// After:  `Cancellation(publisher.sink { … }).store(in: bag)`
    public convenience init(_ cancellable: AnyCancellable) {
        let box = AnyCancellableBox(cancellable)
        self.init { box.cancellable.cancel() }
    }

    /// An `AnyCancellable` that cancels this token when cancelled or released, as every
    /// `AnyCancellable` does.
    public var anyCancellable: AnyCancellable { AnyCancellable(self) }

    /// Keeps this token in a set of `AnyCancellable`s, for Combine code's
    /// `var cancellables = Set<AnyCancellable>()`: emptying or releasing the set cancels it.
    public func store(in set: inout Set<AnyCancellable>) {
        set.insert(anyCancellable)
    }
}

extension AnyCancellable {
    /// A `Cancellation` that cancels this subscription; see `Cancellation.init(_:)`.
    public var cancellation: Cancellation { Cancellation(self) }

    /// Keeps this subscription in `bag`, which cancels it when the bag's owner is released.
    public func store(in bag: CancellationBag) {
        bag.insert(Cancellation(self))
    }
}

/// `AnyCancellable` is not `Sendable`. It is only touched through ``Cancellation``, whose action
/// runs at most once, on one thread; its own deinit (which cancels again, a no-op by then) runs
/// when the last reference goes, after that.
private final class AnyCancellableBox: @unchecked Sendable {
    let cancellable: AnyCancellable
    init(_ cancellable: AnyCancellable) { self.cancellable = cancellable }
}

#endif
