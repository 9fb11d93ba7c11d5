/// A clock on which every sleep returns at once, moving `now` to the deadline.
///
/// For tests where timing does not matter but the code takes `some Clock<Duration>`: a retry
/// with back-off, an animation delay, a poll interval. A sleep still throws
/// `CancellationError` when its task is cancelled, so cancellation paths stay testable.
/// `now` never moves backwards: sleeping until a past deadline leaves it unchanged.
@available(BridgesClock, *)
public final class ImmediateClock: Clock, Sendable {
    public typealias Instant = TestClock.Instant

    private let current: LockedState<Duration>

    public init(now: Instant = Instant()) { current = LockedState(now.offset) }

    public var now: Instant { Instant(offset: current.withLock { $0 }) }
    public var minimumResolution: Duration { .zero }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        current.withLock { $0 = max($0, deadline.offset) }
    }
}

@available(BridgesClock, *)
extension Clock where Self == ImmediateClock {
    /// A new ``ImmediateClock`` at offset zero.
    ///
    /// swift-clocks declares `.immediate` for its own `ImmediateClock<Duration>`: where both modules are
    /// imported, `.immediate` is swift-clocks' (this one is disfavored, so the call resolves instead
    /// of being ambiguous); write `BridgesTesting.ImmediateClock()` there.
    @_disfavoredOverload
    public static var immediate: ImmediateClock { ImmediateClock() }
}
