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
//   task-local `SerialTestExecutor.$scope`, inherited by `Task {}` and child tasks, or by
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

    /// The scope the current task belongs to (inherited by `Task {}` and child tasks).
    @TaskLocal static var scope: UInt64?

    /// Whether the current task runs inside a `withSerialTasks` scope that is still open.
    static var isTracking: Bool {
        guard let scope else { return false }
        return shared.state.withLock { $0.openScopes.contains(scope) }
    }

    typealias Original = @convention(thin) (UnownedJob) -> Void
    typealias Hook = @convention(thin) (UnownedJob, Original) -> Void

    private static let hookInstalled: Bool = installHook()

    private struct State {
        var nextScope: UInt64 = 0
        var openScopes: Set<UInt64> = []
        /// Addresses of tracked tasks, each with the scope that tracked it. Entries leave with
        /// their scope, so that a finished task's address, reused by an unrelated task later,
        /// is not mistaken for it for longer than the scope lasts.
        var tracked: [UInt: UInt64] = [:]
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
    private let queueKey = DispatchSpecificKey<Bool>()

    private init() { queue.setSpecific(key: queueKey, value: true) }

    /// Whether the calling code runs on the serial queue (as a tracked job).
    var isOnQueue: Bool { DispatchQueue.getSpecific(key: queueKey) == true }

    // MARK: - Scopes

    /// An open scope, and the scope its task belonged to before (when scopes nest).
    struct Scope {
        let id: UInt64
        let task: UInt?
        let enclosing: UInt64?
    }

    /// Opens a scope, tracks the current task in it, and installs the hook the first time.
    func enterScope() -> Scope {
        let task = withUnsafeCurrentTask { $0.map { unsafeBitCast($0, to: UInt.self) } }
        _ = Self.hookInstalled  // once per process; concurrent first scopes wait for it (swift_once)
        return state.withLock { state -> Scope in
            state.nextScope += 1
            state.openScopes.insert(state.nextScope)
            let enclosing = task.flatMap { state.tracked.updateValue(state.nextScope, forKey: $0) }
            return Scope(id: state.nextScope, task: task, enclosing: enclosing)
        }
    }

    func leaveScope(_ scope: Scope) {
        state.withLock { state in
            state.openScopes.remove(scope.id)
            state.tracked = state.tracked.filter { $0.value != scope.id }
            if let task = scope.task, let enclosing = scope.enclosing, state.openScopes.contains(enclosing) {
                state.tracked[task] = enclosing
            }
        }
    }

    // MARK: - Jobs

    private func route(_ job: UnownedJob, _ original: Original) {
        let address = unsafeBitCast(job, to: UInt.self)
        let taskScope = Self.scope
        let current = withUnsafeCurrentTask { $0.map { unsafeBitCast($0, to: UInt.self) } }
        let mine = state.withLock { state -> Bool in
            guard !state.openScopes.isEmpty else { return false }
            // Enqueued by a tracked task (inside an open scope, or tracked by address): the job's
            // task joins that scope. This comes first, so that an entry left by a finished task
            // whose address is now reused is overwritten by the new task's own scope.
            let enqueuerScope = taskScope.flatMap { state.openScopes.contains($0) ? $0 : nil }
                ?? current.flatMap { state.tracked[$0] }
            if let enqueuerScope {
                state.tracked[address] = enqueuerScope
            } else if state.tracked[address] == nil {
                return false
            }
            state.pending += 1
            return true
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

    /// Moves the calling task onto the serial queue: from here on it takes turns with the
    /// tasks it tracks. Called inside a scope.
    func hop() async {
        repeat { await waitUntilIdle() } while !isOnQueue
    }

    /// Suspends until no tracked job is queued or running. Called inside a scope.
    ///
    /// The idle check must run after the waiting task has really suspended: a continuation
    /// resumed while its task is still inside `withUnsafeContinuation` lets the task go on where
    /// it is (no hop onto the queue), and ThreadSanitizer cannot see the runtime's handshake for
    /// that case. From a tracked job the check is queued behind that very job, so it runs after
    /// the suspension. From anywhere else (the scope's first hop, an actor-isolated test) a
    /// tracked helper task waits instead, and the caller awaits its value: the runtime's own
    /// task-completion path, which needs no such care; the caller is then resumed by a tracked
    /// task, so a tracked caller lands on the queue.
    func waitUntilIdle() async {
        if isOnQueue {
            await waitUntilIdleOnQueue()
        } else {
            await Task.detached { [self] in await waitUntilIdleOnQueue() }.value
        }
    }

    private func waitUntilIdleOnQueue() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            state.withLock { $0.idleWaiters.append(continuation) }
            // Checked on the queue, behind the job that is running this (see above).
            queue.async { [self] in
                let waiters = state.withLock { $0.pending == 0 ? $0.takeIdleWaiters() : [] }
                for waiter in waiters { waiter.resume() }
            }
        }
    }

    // MARK: - The runtime hook

    private static func installHook() -> Bool {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "swift_task_enqueueGlobal_hook") else {
            _reportTestFailure(
                "BridgesTesting could not find swift_task_enqueueGlobal_hook in this Swift runtime; runUntilIdle() cannot see tasks",
                fileID: #fileID, line: #line
            )
            return false
        }
        let hook = symbol.assumingMemoryBound(to: Hook?.self)
        hook.pointee = { job, original in SerialTestExecutor.shared.route(job, original) }
        return true
    }
}
