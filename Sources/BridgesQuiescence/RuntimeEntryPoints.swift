// What BridgesQuiescence reads from the Swift runtime: the enqueue hook and task ids.
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The runtime's id of a job's task (0 for a job that is not a task, or where the runtime has
/// no such entry point). Task ids are 64-bit and never reused within a process.
package func _taskID(of job: UnownedJob) -> UInt64 {
    RuntimeEntryPoints.getJobTaskID.map { $0(job) } ?? 0
}

/// The runtime's id of the current task, or nil outside a task.
package func currentTaskID() -> UInt64? {
    // An `UnsafeCurrentTask` is a pointer to the task, which is a job.
    withUnsafeCurrentTask { task in task.map { _taskID(of: unsafeBitCast($0, to: UnownedJob.self)) } }
}

/// The two runtime entry points BridgesTesting uses, looked up by name when first needed (never
/// linked), so that a test bundle linking BridgesTesting loads on every OS: where the runtime
/// lacks one, `withSerialTasks` reports it and leaves every task alone.
package enum RuntimeEntryPoints {
    /// The runtime's variable through which the global executor's enqueue can be taken over.
    // written only under JobRouter's lock
    package nonisolated(unsafe) static let enqueueGlobalHook: UnsafeMutablePointer<JobRouter.Hook?>? =
        lookUp("swift_task_enqueueGlobal_hook").map { $0.assumingMemoryBound(to: JobRouter.Hook?.self) }

    /// `swift_task_getJobTaskId`: exported by the runtime of macOS 14, iOS 17, tvOS 17,
    /// watchOS 10 and every Linux toolchain (the Swift 5.9 runtime); absent before.
    package static let getJobTaskID: (@convention(thin) (UnownedJob) -> UInt64)? =
        lookUp("swift_task_getJobTaskId").map { unsafeBitCast($0, to: (@convention(thin) (UnownedJob) -> UInt64).self) }

    package static let missingMessage =
        "withSerialTasks needs the Swift runtime's swift_task_enqueueGlobal_hook and swift_task_getJobTaskId "
        + "(macOS 14, iOS 17, tvOS 17, watchOS 10 or later; Linux): this runtime lacks one, so runUntilIdle() cannot see tasks"

    private static func lookUp(_ name: String) -> UnsafeMutableRawPointer? {
        dlsym(dlopen(nil, RTLD_NOW), name)
    }
}
