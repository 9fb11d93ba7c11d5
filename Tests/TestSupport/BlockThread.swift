import Dispatch

/// Blocks the calling thread until `semaphore` is signalled, for tests that block a thread on
/// purpose (a deadlocked job, a thread that must not start yet). Synchronous on purpose: Apple's
/// Dispatch marks `DispatchSemaphore.wait()` unavailable in async code (an error in Swift 6
/// mode), so async code that must block calls this function instead.
package func blockThread(until semaphore: DispatchSemaphore) {
    semaphore.wait()
}
