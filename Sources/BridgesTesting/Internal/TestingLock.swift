import Bridges

/// BridgesTesting's lock is Bridges' own `LockedState` (visible to this package's modules through
/// `package` access, never to users). Never call user code or resume a continuation inside `withLock`.
typealias TestingLocked<State> = LockedState<State>
