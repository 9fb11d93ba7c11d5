/// Where a job of a task that belongs to no scope runs after it left the main actor (see
/// `JobRouter.route`): a task executor, or before macOS 15 a serial executor (nonisolated code
/// does not depend on the identity of the executor it runs on). What the task enqueues on it
/// goes back through the router.
package final class HopExecutor: SerialExecutor {
    package static let shared = HopExecutor()
    package func enqueue(_ job: UnownedJob) { JobRouter.shared.reroute(job) }

    /// Written out: the protocol's default is available only from macOS 14 / iOS 17.
    package func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}

@available(BridgesTypedSequence, *)
extension HopExecutor: TaskExecutor {}
