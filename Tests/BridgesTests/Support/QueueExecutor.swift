import Dispatch

/// Runs an actor's jobs on a queue the test can recognise: `isCurrent` tells whether code runs
/// on that actor.
final class QueueExecutor: SerialExecutor, @unchecked Sendable {  // the queue serialises everything
    static let key = DispatchSpecificKey<Bool>()
    let queue = DispatchQueue(label: "producer.executor")
    init() { queue.setSpecific(key: Self.key, value: true) }
    static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }
}
