import Dispatch
import Testing

@testable import Bridges

#if os(Linux) || os(Android)
import CBridgesRuntime
#if canImport(Glibc)
import Glibc
#endif

/// What the waiter threads of `waitersThatSleep_areAllWokenInTurn` share.
final class WaiterContext: @unchecked Sendable {  // `entered` only under `lock`; `paths` locks itself
    let lock: Lock
    var entered = 0
    let paths = ThreadPaths()
    init(lock: Lock) { self.lock = lock }
}

/// Starts a pthread that records its /proc path, then takes the lock, counts itself, releases.
func startWaiter(_ context: WaiterContext) -> pthread_t {
    var thread = pthread_t()
    let argument = Unmanaged.passRetained(context).toOpaque()
    let error = pthread_create(
        &thread, nil,
        { argument in
            let context = Unmanaged<WaiterContext>.fromOpaque(argument!).takeRetainedValue()
            context.paths.append(currentThreadPath())
            context.lock.withLock { context.entered += 1 }
            return nil
        }, argument)
    precondition(error == 0, "pthread_create failed with error \(error)")
    return thread
}

/// The calling thread's path under /proc: `<pid>/task/<tid>` (Swift's Glibc has no `gettid`).
func currentThreadPath() -> String {
    var buffer = [CChar](repeating: 0, count: 64)
    let count = readlink("/proc/thread-self", &buffer, buffer.count - 1)
    precondition(count > 0, "cannot read /proc/thread-self")
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Whether the thread is asleep in the kernel: state "S" in `/proc/<pid>/task/<tid>/stat`
/// ("<tid> (<name>) <state> …"; the name may hold spaces and parentheses, hence the last ")").
func isAsleepInTheKernel(_ threadPath: String) -> Bool {
    let file = fopen("/proc/\(threadPath)/stat", "r")
    guard let file else { return false }
    defer { fclose(file) }
    var buffer = [CChar](repeating: 0, count: 512)
    let read = fread(&buffer, 1, buffer.count - 1, file)
    let stat = String(decoding: buffer[..<read].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard let close = stat.lastIndex(of: ")") else { return false }
    return stat[stat.index(after: close)...].drop { $0 == " " }.first == "S"
}

/// Thread paths collected from several threads, under a semaphore: not under `LockedState`,
/// whose lock is the one being tested, so that a broken lock cannot corrupt the test's own record.
final class ThreadPaths: @unchecked Sendable {  // `paths` only while holding `mutex`
    private let mutex = DispatchSemaphore(value: 1)
    private var paths: [String] = []
    func append(_ path: String) { withMutex { paths.append(path) } }
    var count: Int { withMutex { paths.count } }
    func all(_ predicate: (String) -> Bool) -> Bool { withMutex { paths }.allSatisfy(predicate) }

    private func withMutex<R>(_ body: () -> R) -> R {
        mutex.wait()
        defer { mutex.signal() }
        return body()
    }
}
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
                Lock.striped(for: slot).withLock { slot.value += 1 }
            }
        }
        #expect(slots.map(\.value) == Array(repeating: 20_000, count: 5))
    }

    #if os(Linux) || os(Android)
    /// Threads that find the lock held go to sleep in the kernel (after a short spin); the
    /// unlock must wake them, every one, in turn. Each round holds the lock until all four
    /// waiters are asleep in the kernel (their /proc state is "S": after recording their thread
    /// id, the lock's futex wait is the only place they can sleep), because the classic
    /// futex-lock bug (a woken waiter takes the lock as "held, nobody waiting", and the next
    /// unlock wakes no one) shows only with two or more sleepers at the unlock. Against that
    /// mutant the test hangs, and the suite's time limit fails it.
    ///
    /// The waiters are plain pthreads. (The same test on Foundation `Thread`s made a later
    /// withCallback test hang under ThreadSanitizer in the full serial run, twice; on the global
    /// queue, where at most two of the four run at once on two cores, it let the mutant pass.)
    @Test func waitersThatSleep_areAllWokenInTurn() {
        for round in 0..<20 {
            let word = UnsafeMutablePointer<PlatformLock>.allocate(capacity: 1)
            let lock = Lock.initialize(word)
            let context = WaiterContext(lock: lock)
            let threads = lock.withLock {
                let threads = (0..<4).map { _ in startWaiter(context) }
                // A gate, not a timer: every waiter asleep in the kernel, on the lock.
                while !(context.paths.count == 4 && context.paths.all(isAsleepInTheKernel)) { sched_yield() }
                #expect(_bridges_lock_word(word) == 2, "round \(round): sleepers announce themselves")
                #expect(context.entered == 0, "round \(round): nobody got in while the lock was held")
                return threads
            }
            for thread in threads { pthread_join(thread, nil) }  // a lost wake-up leaves one here
            #expect(context.entered == 4)
            #expect(_bridges_lock_word(word) == 0)
            lock.destroy()
            word.deallocate()
        }
    }

    /// An object freed with its lock held is a bug pthread_mutex_destroy reported (EBUSY); the
    /// futex lock keeps that check.
    @Test func destroyingAHeldLock_stopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            let lock = Lock.initialize(.allocate(capacity: 1))
            lock.withLock { lock.destroy() }
        }
    }
    #endif

    @Test func isHeld_whileHeld_byAnyThread() {
        let state = LockedState(0)
        #expect(!state.lock.isHeld)
        state.withLock { _ in #expect(state.lock.isHeld) }
        #expect(!state.lock.isHeld)
    }

    #if DEBUG && (os(Linux) || os(Android))
    /// Debug builds stop, with a message, where a lock is misused: taking it again on the thread
    /// that holds it (which would deadlock) and releasing it from a thread that does not hold it.
    @Test func debugBuilds_stopWhenTheHolderTakesTheLockAgain() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let state = LockedState(0)
            state.withLock { _ in state.withLock { $0 += 1 } }
        }
        #expect(
            String(decoding: result.standardErrorContent, as: UTF8.self)
                .contains("a Bridges lock was taken again by the thread that holds it"))
    }

    @Test func debugBuilds_stopWhenAThreadReleasesALockItDoesNotHold() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let lock = Lock.initialize(.allocate(capacity: 1))
            lock.unlock()
        }
        #expect(
            String(decoding: result.standardErrorContent, as: UTF8.self)
                .contains("a Bridges lock was released by a thread that does not hold it"))
    }

    @Test func debugBuilds_stopWhenAnotherThreadReleasesTheHoldersLock() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let held = UnsafeMutablePointer<Lock>.allocate(capacity: 1)
            held.initialize(to: Lock.initialize(.allocate(capacity: 1)))
            held.pointee.lock()
            var other = pthread_t()
            pthread_create(
                &other, nil,
                { argument in
                    argument!.assumingMemoryBound(to: Lock.self).pointee.unlock()  // stops the process
                    return nil
                }, held)
            pthread_join(other, nil)
        }
        #expect(
            String(decoding: result.standardErrorContent, as: UTF8.self)
                .contains("a Bridges lock was released by a thread that does not hold it"))
    }
    #endif

    /// A stripe, taken for two objects that share it, excludes them from each other (it is one
    /// lock), yet each object's stripe is the same for its whole life.
    @Test func stripes_sameForAnObjectsLife_andSharedWithinTheTable() {
        final class Object {}
        let objects = (0..<(4 * Lock.stripeCount)).map { _ in Object() }
        let words = objects.map { Lock.striped(for: $0).word }
        #expect(objects.map { Lock.striped(for: $0).word } == words)
        #expect(Set(words).count <= Lock.stripeCount)
        #expect(Set(words).count > 1)
    }
}
