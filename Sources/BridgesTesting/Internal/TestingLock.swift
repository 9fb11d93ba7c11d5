// A minimal duplicate of Bridges' internal `LockedState`, kept private to BridgesTesting so that
// Bridges exposes no lock in its public or `@_spi` surface. Same rules: never call user code or
// resume a continuation inside `withLock`.
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Bionic)
import Bionic
#endif

/// A value guarded by a pthread mutex (os_unfair_lock on Apple platforms).
final class TestingLocked<State>: @unchecked Sendable {  // every access to `state` holds `lock`
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
