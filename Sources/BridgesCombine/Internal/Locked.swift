import Bridges

/// BridgesCombine's lock is Bridges' own `LockedState` (visible to this package's modules through
/// `package` access, never to users). Never call into a subscriber, a publisher, a continuation or
/// user code inside `withLock`: take the lock, run one event of a state machine that returns an
/// action, release, then act.
typealias Locked<State> = LockedState<State>
