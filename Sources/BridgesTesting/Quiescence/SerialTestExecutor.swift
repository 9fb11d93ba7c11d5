// The engine behind `withSerialTasks` and `runUntilIdle()`.
//
// Swift's runtime lets a process replace where global-executor jobs go through the exported
// variable `swift_task_enqueueGlobal_hook` (the same mechanism pointfree's
// `withMainSerialExecutor` uses). BridgesTesting installs a hook once, the first time a scope
// starts, and keeps it installed: while no scope is active it forwards every job untouched.
// While a scope is active, jobs of *tracked* tasks go to one serial DispatchQueue, and the
// executor counts the jobs queued or running there. "Idle" is that count reaching zero: no
// tracked task can run until something outside (a real thread, a timer, the main actor)
// resumes one.
//
// A task is tracked when
// - it is the task that opened a scope (registered by pointer: a task's job is the task), or
// - the job was enqueued while a tracked task was running on this thread (known by the
//   task-local `SerialTestExecutor.$isTracking`, inherited by `Task {}` and child tasks, or by
//   the running task's address being tracked), which covers tasks created, resumed or yielded
//   by tracked code, including tasks created before the scope that tracked code resumes, or
// - its pointer was recorded earlier in the scope (a continuation of a tracked task resumed
//   from a legacy API's own thread).
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Dispatch

final class SerialTestExecutor: SerialExecutor, @unchecked Sendable {  // mutable state lives in `state`, under its lock
    static let shared = SerialTestExecutor()

    @TaskLocal static var isTracking = false

    typealias Original = @convention(thin) (UnownedJob) -> Void
    typealias Hook = @convention(thin) (UnownedJob, Original) -> Void

    private struct State {
        var hookInstalled = false
        var scopes = 0
        /// Addresses of tasks whose jobs go to the serial queue while a scope is active.
        var tracked: Set<UInt> = []
        /// Jobs queued on, or running on, the serial queue.
        var pending = 0
        var idleWaiters: [UnsafeContinuation<Void, Never>] = []

        mutating func takeIdleWaiters() -> [UnsafeContinuation<Void, Never>] {
            defer { idleWaiters = [] }
            return idleWaiters
        }
    }

    private let state = TestingLocked(State())
    private let queue = DispatchQueue(label: "BridgesTesting.SerialTestExecutor")

    // MARK: - Scopes

    /// Registers the current task and installs the hook. Returns the task's address.
    func enterScope() -> UInt? {
        let task = withUnsafeCurrentTask { $0.map { unsafeBitCast($0, to: UInt.self) } }
        let install = state.withLock { state -> Bool in
            state.scopes += 1
            if let task { state.tracked.insert(task) }
            defer { state.hookInstalled = true }
            return !state.hookInstalled
        }
        if install { Self.installHook() }
        return task
    }

    func leaveScope(_ task: UInt?) {
        state.withLock { state in
            state.scopes -= 1
            if state.scopes == 0 {
                state.tracked.removeAll()
            } else if let task {
                state.tracked.remove(task)
            }
        }
    }

    var isActive: Bool { state.withLock { $0.scopes > 0 } }

    // MARK: - Jobs

    private func route(_ job: UnownedJob, _ original: Original) {
        let address = unsafeBitCast(job, to: UInt.self)
        let inTrackingScope = Self.isTracking
        let current = withUnsafeCurrentTask { $0.map { unsafeBitCast($0, to: UInt.self) } }
        let mine = state.withLock { state -> Bool in
            guard state.scopes > 0 else { return false }
            if state.tracked.contains(address) {
                state.pending += 1
                return true
            }
            if inTrackingScope || current.map(state.tracked.contains) == true {
                state.tracked.insert(address)
                state.pending += 1
                return true
            }
            return false
        }
        if mine { run(job) } else { original(job) }
    }

    /// A job enqueued on this executor directly (a task whose current executor it became).
    func enqueue(_ job: UnownedJob) {
        state.withLock { $0.pending += 1 }
        run(job)
    }

    private func run(_ job: UnownedJob) {
        queue.async { [self] in
            job.runSynchronously(on: asUnownedSerialExecutor())
            let waiters = state.withLock { state -> [UnsafeContinuation<Void, Never>] in
                state.pending -= 1
                return state.pending == 0 ? state.takeIdleWaiters() : []
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Suspends until no tracked job is queued or running.
    func waitUntilIdle() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            state.withLock { $0.idleWaiters.append(continuation) }
            // Checked on the queue, never inline: resuming inside this closure would not
            // suspend the task, and a check queued behind the running jobs sees them finish.
            queue.async { [self] in
                let waiters = state.withLock { $0.pending == 0 ? $0.takeIdleWaiters() : [] }
                for waiter in waiters { waiter.resume() }
            }
        }
    }

    // MARK: - The runtime hook

    private static func installHook() {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "swift_task_enqueueGlobal_hook") else {
            _reportTestFailure(
                "BridgesTesting could not find swift_task_enqueueGlobal_hook in this Swift runtime; runUntilIdle() cannot see tasks",
                fileID: #fileID, line: #line
            )
            return
        }
        let hook = symbol.assumingMemoryBound(to: Hook?.self)
        hook.pointee = { job, original in SerialTestExecutor.shared.route(job, original) }
    }
}
