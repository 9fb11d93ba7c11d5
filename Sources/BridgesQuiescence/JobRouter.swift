// Which jobs belong to which `withSerialTasks` scope: the one process-wide piece.
//
// Swift's runtime lets a process take over the global executor's enqueue through the exported
// variable `swift_task_enqueueGlobal_hook` (swift-concurrency-extras' `withMainSerialExecutor`
// uses it too). BridgesTesting chains onto it, never owns it: when the first scope opens it
// saves the hook it finds there (nil, or another library's) and installs its own, which
// forwards every job outside a scope to the saved hook (or the runtime's default); when the
// last scope closes it puts the saved hook back. Whenever no scope is open the process is
// exactly as it was. Each scope owns its own serial executor (`ScopeExecutor`), so scopes of
// tests running in parallel never wait for each other: they share nothing but this table.
//
// The hook is one variable with no owner, so two libraries that each set it cannot overlap in
// time: `withMainSerialExecutor` saves "a hook is installed" as a Bool and, at its end, puts
// its own hook back (or none), whatever was there before. So a scope notices when the hook is
// no longer its own (at open, in `runUntilIdle`, at close) and says so by name; run the two
// one after the other, in either order, and both work.
//
// A job belongs to scope S when
// 1. its task was attributed to S earlier in the scope (by the runtime's 64-bit task id,
//    which is never reused, unlike a task's address), or else
// 2. it is enqueued by code running in S (the enqueuing task carries the task-local
//    `JobRouter.$scope == S`, inherited by `Task {}`, `async let` and group children, or its
//    own task id is attributed to S: a `Task.detached` attributed at its creation, and the
//    tasks it creates in turn), and its task was created after S opened (task ids grow: S
//    records the id of a task created as it opens) or it is no task at all (a default actor's
//    processing job). The job's task is then attributed to S (rule 1). A task that existed
//    before the scope (another test's, the test runner's) is never pulled in by being resumed
//    from tracked code: it would otherwise take turns behind this scope's jobs. S reports it
//    instead (once, on the test's task): work the test made before its scope runs beside it.
//
// A task made before the scope is also reported when it left the main actor, belongs to no
// scope, and enqueues work as the current task: then its task-locals can be read, and if its
// test (Swift Testing's `Test.current`, through `identifyTests`) is the one that opened S, that
// test made it before S (a view model whose `init` subscribes, created on the line before).
// A task is created by enqueueing its first job from the creating thread, so every task
// created by a tracked task (`Task {}`, `Task.detached {}`, children) joins the scope at
// birth; a tracked task resumed later from any thread (a legacy API's queue resuming its
// continuation) is recognised by rule 1.
//
// The main actor. Its jobs never pass this hook (Swift 6.3 enqueues them on the main executor
// directly, and does not call `swift_task_enqueueMainExecutor_hook`), and a task created on
// the main actor is never seen at birth. What is seen: a job leaving the main actor (a
// main-actor task calling nonisolated code or a default actor) is enqueued here from the main
// queue with no current task, so nothing says whose it is. While any scope is open such jobs
// are run here and counted (`MainHops`), and every scope's `runUntilIdle` waits for them; so
// are the task's later jobs that come with no current task either (each `Task.yield()`, each
// return from an actor), until something attributes the task to a scope. While the task runs,
// what it enqueues as the current task carries its task-locals and joins its scope.
// `runUntilIdle` also sends marker jobs through the main actor (see `ScopeExecutor.mainRound`).
//
// Why not a task executor preference (`withTaskExecutorPreference`, SE-0417)? Checked on this
// toolchain (Swift 6.3): children (`async let`, groups) inherit the preference, but a plain
// `Task {}` does not, and fire-and-forget `Task {}` is exactly what tests need to settle. The
// hook with task-local attribution covers both, and works back to the oldest OS versions.
import Bridges
import Dispatch

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

package final class JobRouter: Sendable {
    package typealias Original = @convention(thin) (UnownedJob) -> Void
    package typealias Hook = @convention(thin) (UnownedJob, Original) -> Void

    package static let shared = JobRouter()

    /// One per process (`shared`) installs the hook; tests make their own to check its parts.
    package init() {}

    /// The scope the current task runs in (inherited by `Task {}` and child tasks).
    @TaskLocal package static var scope: UInt64?

    /// Installs how to read the test the current task belongs to (BridgesTesting reads Swift
    /// Testing's `Test.current`): a scope records its test's, so that a task made by that test
    /// before the scope opened is recognised when it runs as the current task (see `route`).
    package func identifyTests(by identify: @escaping @Sendable () -> String?) {
        state.withLock { $0.identifyTest = identify }
    }

    /// The test the current task belongs to, if a reader is installed (see `identifyTests`).
    package func testOfCurrentTask() -> String? {
        state.withLock { $0.identifyTest }?()
    }

    /// What this router installs in `swift_task_enqueueGlobal_hook` while a scope is open.
    private static let hook: Hook = { job, original in JobRouter.shared.route(job, original) }

    private struct State: @unchecked Sendable {  // only ever touched under `state`'s lock
        var nextScope: UInt64 = 0
        var scopes: [UInt64: ScopeExecutor] = [:]
        /// Task id → the scope it was attributed to. Entries leave with their scope.
        var tasks: [UInt64: UInt64] = [:]
        /// Scope → the id of a task created as it opened: tasks with a greater id were created
        /// after it opened. `.max` while the scope opens (until then it takes no task by rule 2).
        var watermarks: [UInt64: UInt64] = [:]
        /// The hook found when the first of the open scopes opened: jobs outside every scope go
        /// to it, and it is put back when the last scope closes. Kept after that, for a job
        /// that was already on its way through this router.
        var saved: Hook?
        /// Tasks that left the main actor while a scope was open and are attributed to no scope
        /// (see `route`). Emptied when the last scope closes.
        var hopTasks: Set<UInt64> = []
        /// Tasks outside every scope whose test was read, and that test (see
        /// `noteTaskOfTheTest`). Emptied with `hopTasks`, and when it holds `testsKept` tasks:
        /// forgetting costs only a second read.
        var testsOfTasks: [UInt64: String?] = [:]
        /// The runtime's own enqueue, as the hook is handed it: where `reroute` sends a job that
        /// belongs to no scope.
        var original: Original?
        /// Reads the test the current task belongs to (see `identifyTests`). A field of this
        /// struct, never a `LockedState` of its own: a function that is a generic container's
        /// whole value is wrapped in two more reabstraction thunks by every `withLock { $0 }` in
        /// a debug build, so each read would be slower than the last, and the enqueue hook
        /// reads it for the whole run.
        var identifyTest: (@Sendable () -> String?)?
    }

    private let state = LockedState(State())

    /// A stream teardown that a cancellation handler hands to Bridges' teardown queue runs, when
    /// the canceller belongs to a scope, as a task of that scope (which tracks a task created by
    /// one of its own), so the scope runs it in turn and waits for it; outside every scope it
    /// runs on the queue.
    private static let teardownsRouted: Void = TeardownQueue.route(
        with: .init { work in
            guard JobRouter.currentScope != nil else { return false }
            Task { work() }
            return true
        })

    /// The open scope the current task belongs to, if any.
    package static var currentScope: ScopeExecutor? {
        let taskScope = scope
        let task = currentTaskID()
        return shared.state.withLock { state in
            if let taskScope, let scope = state.scopes[taskScope] { return scope }
            return task.flatMap { state.tasks[$0] }.flatMap { state.scopes[$0] }
        }
    }

    /// Opens a scope and attributes the current task to it. The first open scope installs the
    /// hook, saving the one it replaces. Returns the scope, and a failure to report if the hook
    /// cannot be used or another library's hook was installed. `onMainQueue`: the scope's jobs
    /// run on the main queue, taking turns with main-actor jobs (a `@MainActor` test body).
    /// Synchronous, so that a caller on the main actor opens it before its first suspension:
    /// a task made before the scope and run while the caller suspends (a main-actor task runs
    /// when a main-actor body first suspends) is then seen. Follow it with `setWatermark(of:)`.
    package func openScope(bound: Double, onMainQueue: Bool = false) -> (ScopeExecutor, failure: String?) {
        _ = Self.mainQueueMarked
        _ = Self.teardownsRouted
        let task = currentTaskID()
        let test = testOfCurrentTask()
        guard let variable = RuntimeEntryPoints.enqueueGlobalHook, RuntimeEntryPoints.getJobTaskID != nil else {
            let scope = state.withLock { state in
                state.nextScope += 1
                return ScopeExecutor(id: state.nextScope, bound: bound, onMainQueue: onMainQueue, test: test)
            }
            return (scope, RuntimeEntryPoints.missingMessage)
        }
        let (scope, failure) = state.withLock { state -> (ScopeExecutor, String?) in
            var failure: String?
            let found = variable.pointee
            if state.scopes.isEmpty {
                // Storing a pointer, no code runs: the install is atomic with the scope count.
                state.saved = found
                variable.pointee = Self.hook
                if found != nil { failure = Self.foreignHookAtOpen }
            } else if !Self.isOurs(found) {
                failure = Self.hookReplaced
            }
            state.nextScope += 1
            let scope = ScopeExecutor(id: state.nextScope, bound: bound, onMainQueue: onMainQueue, test: test)
            state.scopes[scope.id] = scope
            state.watermarks[scope.id] = .max
            if let task { state.tasks[task] = scope.id }
            return (scope, failure)
        }
        if failure != nil { _ = scope.noteHookReported() }
        return (scope, failure)
    }

    /// Records which tasks were created after `scope` opened: every task created from here on
    /// has a greater id than the one this creates (the runtime counts them up). Until then the
    /// scope takes in no task by rule 2 (see above).
    package func setWatermark(of scope: ScopeExecutor) async {
        let watermark = await Task.detached { currentTaskID() ?? 0 }.value
        state.withLock { state in
            if state.scopes[scope.id] != nil { state.watermarks[scope.id] = watermark }
        }
    }

    /// Closes a scope: from now on its tasks' jobs go to the global executor. Jobs already
    /// queued on the scope's executor still run there. The last scope to close puts back the
    /// hook found when the first opened. Returns a failure to report if the hook had been
    /// replaced meanwhile and this scope did not say so yet.
    package func close(_ scope: ScopeExecutor) -> String? {
        scope.stop()
        let replaced = state.withLock { state -> Bool in
            state.scopes[scope.id] = nil
            state.watermarks[scope.id] = nil
            state.tasks = state.tasks.filter { $0.value != scope.id }
            guard let variable = RuntimeEntryPoints.enqueueGlobalHook else { return false }
            let replaced = !Self.isOurs(variable.pointee)
            if state.scopes.isEmpty {
                variable.pointee = state.saved
                state.hopTasks = []
                state.testsOfTasks = [:]
            }
            return replaced
        }
        return replaced ? checkHook(for: scope) : nil
    }

    /// A failure to report for `scope` if the hook is no longer this router's (once per scope).
    package func checkHook(for scope: ScopeExecutor) -> String? {
        guard let variable = RuntimeEntryPoints.enqueueGlobalHook, !Self.isOurs(variable.pointee),
            scope.noteHookReported()
        else { return nil }
        return Self.hookReplaced
    }

    /// Whether `hook` is this router's.
    private static func isOurs(_ hook: Hook?) -> Bool {
        guard let hook else { return false }
        return unsafeBitCast(hook, to: UnsafeRawPointer.self) == unsafeBitCast(Self.hook, to: UnsafeRawPointer.self)
    }

    private static let overlapAdvice =
        "A withSerialTasks scope and withMainSerialExecutor cannot overlap in time (both use the runtime's one swift_task_enqueueGlobal_hook): "
        + "run them one after the other, in either order (for example, tests that use withMainSerialExecutor in a .serialized suite "
        + "that no withSerialTasks test runs beside, or uncheckedUseMainSerialExecutor set only where no scope is open)."

    package static let foreignHookAtOpen =
        "withSerialTasks opened while another hook was installed in swift_task_enqueueGlobal_hook: swift-concurrency-extras' "
        + "withMainSerialExecutor { … } is running, or uncheckedUseMainSerialExecutor is true. Jobs outside this scope still go to that hook. "
        + overlapAdvice

    package static let hookReplaced =
        "swift_task_enqueueGlobal_hook was replaced while this withSerialTasks scope was open, most likely by swift-concurrency-extras' "
        + "withMainSerialExecutor { … } or uncheckedUseMainSerialExecutor = true in a test running at the same time: this scope's tasks "
        + "are no longer tracked, and runUntilIdle() cannot wait for them. " + overlapAdvice

    private func route(_ job: UnownedJob, _ original: Original) {
        let enqueuerScope = Self.scope
        let enqueuer = currentTaskID()
        let jobTask = _taskID(of: job)
        // On the main queue, and not in a job of a scope run in the main queue's turn (those are
        // the scope's, and counting them as hops would make every open scope wait for them).
        let onTheMainQueue = DispatchQueue.getSpecific(key: Self.mainQueueKey) == true
        let leavesMainActor = enqueuer == nil && onTheMainQueue && !ScopeExecutor.isOnAScopeQueue
        var hop = false
        var saved: Hook?
        /// A scope whose code resumed a task made before it opened (rule 2 leaves such a task out).
        var resumedBefore: ScopeExecutor?
        /// A task outside every scope that enqueues work as the current task: work of its own
        /// after it left the main actor, or a job of a scope's task that it resumes.
        var untracked: ScopeExecutor.Untracked?
        let scope = state.withLock { state -> ScopeExecutor? in
            saved = state.saved
            state.original = original
            guard !state.scopes.isEmpty else { return nil }
            let enqueuerOutside = enqueuerScope == nil && enqueuer.map { state.tasks[$0] == nil } == true
            if jobTask != 0, let id = state.tasks[jobTask], let scope = state.scopes[id] {
                if enqueuerOutside, let enqueuer { untracked = .resumedTheScope(enqueuer) }
                return scope
            }
            let id =
                enqueuerScope.flatMap { state.scopes[$0] == nil ? nil : $0 }
                ?? enqueuer.flatMap { state.tasks[$0] }
            let watermark = id.flatMap { state.watermarks[$0] } ?? .max
            // (While the scope opens, the task it creates for its watermark is such a task. Queued
            // teardowns that a builder of the scope runs may be another test's: what they resume
            // is not this test's work.)
            if let id, let scope = state.scopes[id], jobTask != 0, jobTask <= watermark, watermark != .max,
                !QueuedTeardowns.running
            {
                resumedBefore = scope
            }
            if enqueuerOutside, let enqueuer, state.hopTasks.contains(enqueuer) {
                untracked = .leftTheMainActor(enqueuer)
            }
            if let id, let scope = state.scopes[id], jobTask == 0 || jobTask > watermark {
                if jobTask != 0 {
                    state.tasks[jobTask] = id
                    state.hopTasks.remove(jobTask)
                }
                // A task that left the main actor, now seen running with its scope's task-local:
                // from here on its jobs are its scope's, like any other task's.
                if let enqueuer, enqueuerScope == id, state.hopTasks.remove(enqueuer) != nil {
                    state.tasks[enqueuer] = id
                }
                return scope
            }
            // A task leaving the main actor (or a default actor it calls, scheduled to run), and
            // every later job of such a task that comes with no current task (each `Task.yield()`,
            // each return from an actor): the runtime enqueues those after the task has stopped
            // running, so nothing says whose they are (a task created on the main actor never
            // passed this hook).
            if enqueuer == nil, leavesMainActor || (jobTask != 0 && state.hopTasks.contains(jobTask)) {
                if jobTask != 0 { state.hopTasks.insert(jobTask) }
                hop = true
            }
            return nil
        }
        resumedBefore?.noteUntracked(.resumedBeforeScope(jobTask))
        if let untracked { noteTaskOfTheTest(untracked) }
        if let scope {
            scope.enqueue(job, taskID: jobTask, original: original)
        } else if hop {
            // Run it here and count it, so that every open scope's `runUntilIdle` waits for it;
            // while it runs, what it enqueues as the current task carries its task-locals and
            // joins its scope.
            mainHops.begin()
            DispatchQueue.global().async { [mainHops] in
                Self.run(job)
                mainHops.end()
            }
        } else if let saved {
            saved(job, original)
        } else {
            original(job)
        }
    }

    /// Jobs of tasks leaving the main actor while scopes are open (see `route`).
    package let mainHops = MainHops()

    /// How many tasks' tests `noteTaskOfTheTest` keeps, so that a run whose scopes always
    /// overlap does not keep one for every task it ever made.
    private static let testsKept = 4_096

    /// A task outside every scope enqueues work as the current task (see `route`): if it
    /// belongs to the test of an open scope that opened after it was made, that test made it
    /// before its scope (a view model whose `init` subscribes, a suite-level `let`), and it runs
    /// beside the scope. Runs in that task, so the test it belongs to can be read.
    private func noteTaskOfTheTest(_ what: ScopeExecutor.Untracked) {
        let task = what.task
        // The test is read once per task (it may cost a description of a parameterized case);
        // its scopes are looked up every time: the test may open its scope after the first read.
        let known = state.withLock { $0.testsOfTasks[task] }
        let test: String?
        if let known {
            test = known
        } else {
            test = testOfCurrentTask()
            state.withLock { state in
                if state.testsOfTasks.count >= Self.testsKept { state.testsOfTasks.removeAll(keepingCapacity: true) }
                state.testsOfTasks[task] = test
            }
        }
        guard let test else { return }
        let scopes = state.withLock { state in
            state.scopes.values.filter { $0.test == test && task <= state.watermarks[$0.id] ?? 0 }
        }
        for scope in scopes { scope.noteUntracked(what) }
    }

    /// Runs such a job on `HopExecutor`, so that what the task enqueues on the executor it runs
    /// on comes back through `reroute` (on the global concurrent executor, a `Task.yield()`
    /// would go to the global pool without passing the hook, and the task would run unseen).
    private static func run(_ job: UnownedJob) {
        // Task executors came with the same OS versions as typed sequences.
        // (swift format would space the availability macro below as a platform name)
        // swift-format-ignore
        if #available(BridgesTypedSequence, *) {
            job.runSynchronously(on: HopExecutor.shared.asUnownedTaskExecutor())
        } else {
            job.runSynchronously(on: HopExecutor.shared.asUnownedSerialExecutor())
        }
    }

    /// A job enqueued on `HopExecutor`: routed as if it had come through the hook.
    func reroute(_ job: UnownedJob) {
        // Set by the hook call that brought the first job `HopExecutor` ran.
        guard let original = state.withLock({ $0.original }) else {
            preconditionFailure("HopExecutor ran a job the hook never saw")
        }
        route(job, original)
    }

    /// Set on the main queue, so that the hook knows when it runs on the main actor (on Linux
    /// that is not always the main thread: after `dispatchMain()` a worker drains the main queue).
    private static let mainQueueKey = DispatchSpecificKey<Bool>()
    private static let mainQueueMarked: Void = DispatchQueue.main.setSpecific(key: mainQueueKey, value: true)

}
