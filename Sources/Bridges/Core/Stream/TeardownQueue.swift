import Dispatch

/// Where a stream's nonisolated teardown runs when its consumer's task was cancelled while it
/// waited in `next()`: the cancellation is decided in the task's cancellation handler, which may
/// neither run the teardown (a teardown may wait for a thread that is resuming that very task) nor
/// leave it to the consumer's task (which may not run for a long time: its actor is busy, or the
/// cooperative pool is saturated).
///
/// A queue of its own, at a QoS the concurrency runtime's pool never runs tasks at
/// (`userInteractive`: a `TaskPriority` tops out at `.high`, `userInitiated`), so its threads are
/// free however busy that pool is. At the default QoS it shares Dispatch's default root queue with
/// the pool: with every thread of the pool spinning, Linux's Dispatch took up to seconds to give
/// the queue a thread. Concurrent, so that a teardown that waits for its producer thread holds up
/// no other stream's. BENCHMARKS.md gives the time from `cancel()` to such a teardown with the
/// pool saturated.
package enum TeardownQueue {
    static let queue = DispatchQueue(label: "Bridges.teardown", qos: .userInteractive, attributes: .concurrent)

    /// A scheduler that may take the work instead, in the canceller's context: BridgesTesting's
    /// `withSerialTasks` keeps a teardown its test's task caused in that test's scope (a task the
    /// scope runs and waits for), where a thread of Dispatch's would run beside the test unseen.
    package struct Router: Sendable {
        package let take: @Sendable (_ work: @escaping @Sendable () -> Void) -> Bool
        package init(_ take: @escaping @Sendable (_ work: @escaping @Sendable () -> Void) -> Bool) { self.take = take }
    }

    static let router = LockedState<Router?>(nil)

    /// Installs the router (once per process: it decides by the context it is called in).
    package static func route(with newRouter: Router) {
        router.withLock { $0 = newRouter }
    }

    /// Runs `work` on the queue, unless the router takes it. Called in the canceller's context.
    static func async(_ work: @escaping @Sendable () -> Void) {
        if let router = router.withLock({ $0 }), router.take(work) { return }
        queue.async(execute: work)
    }
}
