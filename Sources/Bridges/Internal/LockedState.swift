#if canImport(Darwin)
import Darwin
#elseif os(Linux) || os(Android)
import CBridgesRuntime
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
#error("Bridges needs os_unfair_lock, a futex or pthread_mutex")
#endif

// The lock under every state machine and striped table: four bytes on Apple platforms and Linux.
#if canImport(Darwin)
@usableFromInline typealias PlatformLock = os_unfair_lock
#elseif os(Linux) || os(Android)
/// A futex-based lock word (`CBridgesRuntime`): 0 unlocked, 1 locked, 2 locked with sleepers.
/// glibc's `pthread_mutex_t` is 40 bytes and ≈ 57 instructions per uncontended lock and unlock;
/// this is 4 bytes and ≈ 20.
@usableFromInline typealias PlatformLock = UInt32
#else
@usableFromInline typealias PlatformLock = pthread_mutex_t
#endif

@inlinable
func _initializeLock(_ lock: UnsafeMutablePointer<PlatformLock>) {
    #if canImport(Darwin)
    lock.initialize(to: os_unfair_lock())
    #elseif os(Linux) || os(Android)
    lock.initialize(to: 0)
    #else
    lock.initialize(to: pthread_mutex_t())
    let error = pthread_mutex_init(lock, nil)
    precondition(error == 0, "pthread_mutex_init failed with error \(error)")
    #endif
}

@inlinable
func _destroyLock(_ lock: UnsafeMutablePointer<PlatformLock>) {
    #if os(Linux) || os(Android)
    // What pthread_mutex_destroy's EBUSY caught: an object freed while its lock is held.
    precondition(_bridges_lock_word(lock) == 0, "a Bridges lock was destroyed while held")
    _bridges_lock_destroy(lock)
    #elseif !canImport(Darwin)
    let error = pthread_mutex_destroy(lock)
    precondition(error == 0, "pthread_mutex_destroy failed with error \(error)")
    #endif
    lock.deinitialize(count: 1)
}

@inlinable
func _lock(_ lock: UnsafeMutablePointer<PlatformLock>) {
    #if canImport(Darwin)
    os_unfair_lock_lock(lock)
    #elseif os(Linux) || os(Android)
    _bridges_lock(lock)
    #else
    let error = pthread_mutex_lock(lock)
    precondition(error == 0, "pthread_mutex_lock failed with error \(error)")
    #endif
}

/// Takes the lock if it is free; never waits (tests use it to ask whether a lock is held).
@inlinable
func _tryLock(_ lock: UnsafeMutablePointer<PlatformLock>) -> Bool {
    #if canImport(Darwin)
    os_unfair_lock_trylock(lock)
    #elseif os(Linux) || os(Android)
    _bridges_trylock(lock)
    #else
    pthread_mutex_trylock(lock) == 0
    #endif
}

@inlinable
func _unlock(_ lock: UnsafeMutablePointer<PlatformLock>) {
    #if canImport(Darwin)
    os_unfair_lock_unlock(lock)
    #elseif os(Linux) || os(Android)
    _bridges_unlock(lock)
    #else
    let error = pthread_mutex_unlock(lock)
    precondition(error == 0, "pthread_mutex_unlock failed with error \(error)")
    #endif
}

/// A value guarded by a lock, both in one allocation.
///
/// Over `os_unfair_lock` on Apple platforms and a four-byte futex lock on Linux. Not
/// `Synchronization.Mutex`: that needs iOS 18, and ThreadSanitizer reports false races on it
/// with this toolchain. Never call user code or resume a continuation inside `withLock`.
///
/// `package`: BridgesCombine and BridgesTesting use it too, so the package has one lock.
///
/// - Warning: `State` must not be a function type, an optional of one or a tuple holding one:
///   the state is stored at the generic abstraction, so each `inout` access from concrete code
///   reabstracts it and writes back a thunk around the previous value (`withLock { $0 }` grew
///   ~96 B per read and, after ~100 000 reads, overflowed the stack when the function was
///   called). Box functions in a final class or a struct (their fields keep their own
///   abstraction): checked in release mode for structs, enums, optionals of structs, classes
///   and existentials, none of which grows.
@usableFromInline
package struct LockedState<State> {
    @usableFromInline let storage: LockedStateStorage<State>

    @inlinable
    init(storage: LockedStateStorage<State>) { self.storage = storage }

    /// A lock over `initial` (the spelling the sibling modules use).
    @inlinable
    package init(_ initial: sending State) { self = Self.create(initial) }

    /// A lock over `initial` when the compiler cannot see that the caller gives it up: the caller
    /// vouches that what `initial` references is used only through the lock, or is itself safe
    /// to call from any thread (a Combine subscriber, which a publisher must call serially).
    @inlinable
    package init(vouchingFor initial: State) {
        nonisolated(unsafe) let initial = initial  // the caller's promise, stated at the call site
        self = Self.create(initial)
    }

    @inlinable
    static func create(_ initial: sending State) -> LockedState<State> {
        let buffer = LockedStateStorage<State>.create(minimumCapacity: 1) { _ in initial }
        // `ManagedBuffer.create` returns an instance of the class it is called on.
        let storage = unsafeDowncast(buffer, to: LockedStateStorage<State>.self)
        storage.withUnsafeMutablePointerToElements { _initializeLock($0) }
        return LockedState(storage: storage)
    }

    /// Reads a field of the state that never changes after creation (a `let`) without the lock.
    /// `body` must project only that field (`{ $0.pointee.site }`): it is written by nothing
    /// after creation, so the read races with nothing, whereas copying the whole state would
    /// read fields that other threads write under the lock.
    @inlinable
    package func readConstant<R>(_ body: (UnsafeMutablePointer<State>) -> R) -> R {
        storage.withUnsafeMutablePointerToHeader { body($0) }
    }

    @inlinable
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        try storage.withUnsafeMutablePointers { state, lock in
            _lock(lock)
            defer { _unlock(lock) }
            return try body(&state.pointee)
        }
    }
}

// Sendable whatever `State` is, as `Synchronization.Mutex` is, and for the same reason: the
// initial state is taken `sending` (the caller gives up every other reference to it, which the
// compiler checks), and from then on every access goes through the lock. A non-Sendable state
// (a state machine holding elements or continuations) is thereby confined to the lock.
extension LockedState: @unchecked Sendable {}

@usableFromInline
final class LockedStateStorage<State>: ManagedBuffer<State, PlatformLock> {
    @inlinable
    deinit {
        // ManagedBuffer destroys the header (the state) itself.
        withUnsafeMutablePointerToElements { _destroyLock($0) }
    }
}
