#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Bionic)
import Bionic
#endif

/// A value guarded by a lock: BridgesCombine's own copy of the idea behind `Bridges`'
/// internal `LockedState` (which is not visible across modules).
///
/// Over `os_unfair_lock` on Apple platforms and `pthread_mutex_t` elsewhere. Never call into a
/// subscriber, a publisher, a continuation or user code inside ``withLock(_:)``: take the lock,
/// run one event of a state machine that returns an action, release, then act.
final class Locked<State>: @unchecked Sendable {  // `state` is only touched with `lock` held
    #if canImport(Darwin)
    private let lock: UnsafeMutablePointer<os_unfair_lock>
    #else
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    #endif
    private var state: State

    init(_ initial: State) {
        state = initial
        lock = .allocate(capacity: 1)
        #if canImport(Darwin)
        lock.initialize(to: os_unfair_lock())
        #else
        lock.initialize(to: pthread_mutex_t())
        let error = pthread_mutex_init(lock, nil)
        precondition(error == 0, "pthread_mutex_init failed with error \(error)")
        #endif
    }

    deinit {
        #if !canImport(Darwin)
        pthread_mutex_destroy(lock)
        #endif
        lock.deinitialize(count: 1)
        lock.deallocate()
    }

    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        #if canImport(Darwin)
        os_unfair_lock_lock(lock)
        defer { os_unfair_lock_unlock(lock) }
        #else
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        #endif
        return try body(&state)
    }
}
