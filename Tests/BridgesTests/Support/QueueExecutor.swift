import Bridges
import Dispatch

/// Runs an actor's jobs on a queue the test can recognise: `isCurrent` tells whether code runs
/// on that actor.
///
/// Written with the executor API of the package's floor, as BridgesTesting's executors are:
/// `enqueue(_: UnownedJob)` rather than `enqueue(_: consuming ExecutorJob)`, and
/// `UnownedSerialExecutor(ordinary:)` rather than the protocol's default
/// `asUnownedSerialExecutor()`; `ExecutorJob` and that default need macOS 14 / iOS 17.
final class QueueExecutor: SerialExecutor, @unchecked Sendable {  // the queue serialises everything
    static let key = DispatchSpecificKey<Bool>()
    let queue = DispatchQueue(label: "producer.executor")
    init() { queue.setSpecific(key: Self.key, value: true) }
    static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
    func enqueue(_ job: UnownedJob) {
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }
    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}

/// A producer actor on a `QueueExecutor`: each send reports whether it came back on the actor.
actor QueueProducer {
    let executor = QueueExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    func send(_ sink: CallbackStream<Int, Never>.Sink, _ values: [Int]) async -> [Bool] {
        var onActor: [Bool] = []
        for value in values {
            _ = await sink.send(value)
            onActor.append(QueueExecutor.isCurrent)
        }
        return onActor
    }

    func send(_ events: Broadcast<Int>, _ values: some Sequence<Int>) async -> [Bool] {
        var onActor: [Bool] = []
        for value in values {
            await events.send(value)
            onActor.append(QueueExecutor.isCurrent)
        }
        return onActor
    }
}
