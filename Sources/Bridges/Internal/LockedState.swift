#if canImport(Darwin)
import CBridgesRuntime
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

// The word of a lock: four bytes on Apple platforms and Linux.
#if canImport(Darwin)
@usableFromInline typealias PlatformLock = os_unfair_lock
#elseif os(Linux) || os(Android)
/// A futex-based lock word (`CBridgesRuntime`): 0 unlocked, 1 locked, 2 locked with sleepers.
@usableFromInline typealias PlatformLock = UInt32
#else
@usableFromInline typealias PlatformLock = pthread_mutex_t
#endif

/// The package's one lock: `os_unfair_lock` on Apple platforms, a futex lock on Linux
/// (`CBridgesRuntime`), taken one way, ``withLock(_:)``.
///
/// A `Lock` is the address of a lock word, either one of an object's own (``LockedState``, made
/// with ``initialize(_:)``) or one of the shared table's stripes, taken for an object
/// (``striped(for:)``). For a stripe, ThreadSanitizer is shown a mutex of that object's own, so
/// objects sharing a stripe get no happens-before edge from it.
///
/// Debug builds check its use on Linux (`os_unfair_lock` checks itself in every build): taking a
/// lock the thread already holds, or releasing one it does not hold, stops with a message.
@usableFromInline
package struct Lock: @unchecked Sendable {
    // @unchecked Sendable: a lock is made to be shared between threads.
    @usableFromInline let word: UnsafeMutablePointer<PlatformLock>
    /// The object a stripe is taken for; nil for a lock of its own.
    @usableFromInline let sharer: UnsafeRawPointer?

    /// The lock whose word is at `word`, made by ``initialize(_:)``.
    @inlinable
    init(_ word: UnsafeMutablePointer<PlatformLock>) {
        self.word = word
        self.sharer = nil
    }

    /// The stripe at `word` (from ``stripe(for:)``), taken for the object at `sharer`.
    @inlinable
    init(stripe word: UnsafeMutablePointer<PlatformLock>, for sharer: UnsafeRawPointer) {
        self.word = word
        self.sharer = sharer
    }

    /// Makes a lock at `word` (uninitialised memory).
    @inlinable
    static func initialize(_ word: UnsafeMutablePointer<PlatformLock>) -> Lock {
        #if canImport(Darwin)
        word.initialize(to: os_unfair_lock())
        #elseif os(Linux) || os(Android)
        word.initialize(to: 0)
        #else
        word.initialize(to: pthread_mutex_t())
        let error = pthread_mutex_init(word, nil)
        precondition(error == 0, "pthread_mutex_init failed with error \(error)")
        #endif
        return Lock(word)
    }

    /// Ends the life of a lock made by ``initialize(_:)``, which must not be held.
    @inlinable
    func destroy() {
        #if os(Linux) || os(Android)
        // What pthread_mutex_destroy's EBUSY caught: an object freed while its lock is held.
        precondition(_bridges_lock_word(word) == 0, "a Bridges lock was destroyed while held")
        _bridges_lock_destroy(word)
        #elseif !canImport(Darwin)
        let error = pthread_mutex_destroy(word)
        precondition(error == 0, "pthread_mutex_destroy failed with error \(error)")
        #endif
        word.deinitialize(count: 1)
    }

    /// Runs `body` with the lock held: one event, decided; act after it. `body` must not call
    /// user code, resume a continuation, release an element or suspend, and takes another lock
    /// only an inner object's (an outer object may decide into inner ones, never the reverse:
    /// ARCHITECTURE.md, "The lock").
    @inlinable
    package func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Whether some thread holds the lock now (tests ask it; never waits).
    package var isHeld: Bool {
        #if canImport(Darwin)
        guard os_unfair_lock_trylock(word) else { return true }
        os_unfair_lock_unlock(word)
        #elseif os(Linux) || os(Android)
        guard _bridges_trylock(word) else { return true }
        _bridges_unlock(word)
        #else
        guard pthread_mutex_trylock(word) == 0 else { return true }
        pthread_mutex_unlock(word)
        #endif
        return false
    }

    @inlinable
    func lock() {
        #if DEBUG && (os(Linux) || os(Android))
        if !_bridges_lock_debug_acquire(word) {
            fatalError("a Bridges lock was taken again by the thread that holds it (a deadlock)")
        }
        #endif
        #if canImport(Darwin)
        if let sharer { _bridges_lock_shared(word, sharer) } else { os_unfair_lock_lock(word) }
        #elseif os(Linux) || os(Android)
        if let sharer { _bridges_lock_shared(word, sharer) } else { _bridges_lock(word) }
        #else
        let error = pthread_mutex_lock(word)
        precondition(error == 0, "pthread_mutex_lock failed with error \(error)")
        #endif
    }

    @inlinable
    func unlock() {
        #if DEBUG && (os(Linux) || os(Android))
        if !_bridges_lock_debug_release(word) {
            fatalError("a Bridges lock was released by a thread that does not hold it")
        }
        #endif
        #if canImport(Darwin)
        if let sharer { _bridges_unlock_shared(word, sharer) } else { os_unfair_lock_unlock(word) }
        #elseif os(Linux) || os(Android)
        if let sharer { _bridges_unlock_shared(word, sharer) } else { _bridges_unlock(word) }
        #else
        let error = pthread_mutex_unlock(word)
        precondition(error == 0, "pthread_mutex_unlock failed with error \(error)")
        #endif
    }
}

/// A value guarded by a ``Lock`` of its own, both in one allocation.
///
/// Not `Synchronization.Mutex`: that needs iOS 18, and ThreadSanitizer reports false races on it
/// with this toolchain. Never call user code or resume a continuation inside `withLock`.
///
/// `package`: BridgesCombine and BridgesTesting use it too.
///
/// - Warning: `State` must not be a function type, an optional of one or a tuple holding one:
///   the state is stored at the generic abstraction, so each `inout` access from concrete code
///   reabstracts it and writes back a thunk around the previous value, which grows without
///   bound. Box functions in a final class or a struct (their fields keep their own
///   abstraction).
@usableFromInline
package struct LockedState<State> {
    @usableFromInline let storage: LockedStateStorage<State>

    /// A lock over `initial`.
    @inlinable
    package init(_ initial: sending State) {
        let buffer = LockedStateStorage<State>.create(minimumCapacity: 1) { _ in initial }
        // `ManagedBuffer.create` returns an instance of the class it is called on.
        storage = unsafeDowncast(buffer, to: LockedStateStorage<State>.self)
        storage.withUnsafeMutablePointerToElements { _ = Lock.initialize($0) }
    }

    /// A lock over `initial` when the compiler cannot see that the caller gives it up: the caller
    /// vouches that what `initial` references is used only through the lock, or is itself safe
    /// to call from any thread (a Combine subscriber, which a publisher must call serially).
    @inlinable
    package init(vouchingFor initial: State) {
        nonisolated(unsafe) let initial = initial  // the caller's promise, stated at the call site
        self.init(initial)
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
        try storage.withUnsafeMutablePointers { state, word in
            try Lock(word).withLock { try body(&state.pointee) }
        }
    }

    /// The lock itself (tests ask whether it is held).
    package var lock: Lock { storage.withUnsafeMutablePointerToElements { Lock($0) } }
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
        withUnsafeMutablePointerToElements { Lock($0).destroy() }
    }
}
