@testable import Bridges
import Dispatch
import Testing
#if os(Linux) || os(Android)
import CBridgesRuntime
#if canImport(Glibc)
import Glibc
#endif
#endif

/// The lock under every state machine: four bytes, on Linux a futex lock of Bridges' own
/// (`CBridgesRuntime.c`). These tests attack what a lock must never get wrong: two holders at
/// once, and a waiter that sleeps and is never woken.
@Suite("The platform lock", .timeLimit(.minutes(3)))
struct PlatformLockTests {
    @Test func isFourBytes() {
        #expect(MemoryLayout<PlatformLock>.size == 4)
    }

    /// Eight threads, 20 000 increments each of a plain `Int` under the lock: any overlap of two
    /// holders loses increments (and ThreadSanitizer, which CI runs on this suite, reports the
    /// race if the lock's orderings do not order the accesses).
    @Test func mutualExclusion_eightThreads_exactTotal() {
        let counter = LockedState(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<20_000 {
                counter.withLock { $0 += 1 }
            }
        }
        #expect(counter.withLock { $0 } == 160_000)
    }

    /// A contended lock, and a striped one: the same total through the shared table, with
    /// threads hitting the same stripe and different stripes.
    @Test func stripedLocks_exactTotalPerObject() {
        final class Slot: @unchecked Sendable { var value = 0 }  // guarded by its stripe
        let slots = (0..<5).map { _ in Slot() }
        DispatchQueue.concurrentPerform(iterations: 10) { index in
            let slot = slots[index % slots.count]
            for _ in 0..<10_000 {
                _StripedLocks.withLock(for: slot) { slot.value += 1 }
            }
        }
        #expect(slots.map(\.value) == Array(repeating: 20_000, count: 5))
    }

    #if os(Linux) || os(Android)
    /// Threads that find the lock held go to sleep in the kernel (after a short spin); the
    /// unlock must wake them, every one, in turn. The test holds the lock until the lock word
    /// says a thread sleeps on it (or is about to), so the sleeping path is the one tested.
    @Test func waitersThatSleep_areAllWokenInTurn() async {
        let lock = UnsafeMutablePointer<PlatformLock>.allocate(capacity: 1)
        _initializeLock(lock)
        defer { _destroyLock(lock); lock.deallocate() }
        nonisolated(unsafe) var entered = 0  // guarded by `lock`
        nonisolated(unsafe) let shared = lock
        _lock(lock)
        let group = DispatchGroup()
        for _ in 0..<4 {
            DispatchQueue.global().async(group: group) {
                _lock(shared)
                entered += 1
                _unlock(shared)
            }
        }
        // A gate, not a timer: wait until some thread has announced that it sleeps on the lock.
        while _bridges_lock_word(lock) != 2 { sched_yield() }
        #expect(entered == 0, "nobody got in while the lock was held")
        _unlock(lock)
        await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
        _lock(lock)
        #expect(entered == 4)
        _unlock(lock)
        #expect(_bridges_lock_word(lock) == 0)
    }

    /// An object freed with its lock held is a bug pthread_mutex_destroy reported (EBUSY); the
    /// futex lock keeps that check.
    @Test func destroyingAHeldLock_stopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            let lock = UnsafeMutablePointer<PlatformLock>.allocate(capacity: 1)
            _initializeLock(lock)
            _lock(lock)
            _destroyLock(lock)
        }
    }

    @Test func tryLock_failsWhileHeld_succeedsWhenFree() {
        let lock = UnsafeMutablePointer<PlatformLock>.allocate(capacity: 1)
        _initializeLock(lock)
        defer { _destroyLock(lock); lock.deallocate() }
        #expect(_tryLock(lock))
        #expect(!_tryLock(lock))
        _unlock(lock)
        #expect(_tryLock(lock))
        _unlock(lock)
    }
    #endif
}
