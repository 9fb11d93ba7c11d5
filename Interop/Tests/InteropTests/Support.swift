import Dispatch
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The runtime's global-enqueue hook, read where both libraries find it: nil when none is installed.
func enqueueHook() -> UnsafeRawPointer? {
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "swift_task_enqueueGlobal_hook") else { return nil }
    return symbol.assumingMemoryBound(to: UnsafeRawPointer?.self).pointee
}

let mainQueueKey = DispatchSpecificKey<Bool>()
private let mainQueueMarked: Void = DispatchQueue.main.setSpecific(key: mainQueueKey, value: true)

/// Whether an ordinary detached task runs on the main queue: never, unless a hook sends every
/// task there (`withMainSerialExecutor`'s).
func detachedTaskRunsOnMainQueue() async -> Bool {
    _ = mainQueueMarked
    return await Task.detached { DispatchQueue.getSpecific(key: mainQueueKey) == true }.value
}

/// How many rounds the interleaving test runs (each: parallel scopes, then Point-Free's tools).
let rounds = 25
