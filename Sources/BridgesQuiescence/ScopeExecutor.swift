// The serial executor one `withSerialTasks` scope owns.
//
// Jobs that `JobRouter` attributes to the scope are queued here, in the order they became
// runnable, and run one at a time on the scope's own serial DispatchQueue. The executor
// counts the jobs queued or running ("pending"); the scope is idle when that count is zero.
// Scopes of tests that run in parallel each have their own executor: they run side by side
// and never wait for each other.
//
// A scope opened by a main-actor test body (`onMainQueue`) runs each of its jobs inside a job of
// the main queue (which runs `queue.sync` there): one at a time *with the main actor's jobs*, so
// the body's main-actor jobs and the scope's jobs interleave only where the body suspends (the
// main actor's executor is the main dispatch queue, serial, on Linux and Apple platforms). A
// turn runs every job the scope has by then, so a tracked task goes on to its next wait before
// the body's next job. The scope still has its own queue, which code on it sees as the main
// queue too (`MainQueue`), and its own count: parallel tests stay independent, and only share
// the main thread, as their main-actor bodies already do.
//
// Never a hang: every wait here has a bound of real time (a safety net, never a way to wait
// for work). When it passes, the waiter is told why the scope did not settle. And a watchdog
// looks at the executor every quarter of the bound: a job that has been running for longer
// than the bound while other jobs wait behind it blocks its thread (a semaphore, a lock,
// `DispatchQueue.sync`), most likely waiting for one of them. The watchdog then *releases* the
// scope: its queued jobs, and all later ones, go to the global executor, so the blocked job's
// partner can run and the test ends with a failure (reported on the test's own task by the
// next `runUntilIdle` or by the end of the scope) instead of hanging.
import Bridges
import Dispatch

package final class ScopeExecutor: SerialExecutor, Sendable {
    package enum Outcome: Sendable {
        case idle
        case timedOut(String)
    }

    private struct Queued: @unchecked Sendable {  // an UnownedJob, and where the runtime would have put it
        let job: UnownedJob
        let taskID: UInt64
        let original: JobRouter.Original?
        /// When it was queued: a scope on the main queue notices a main thread that never
        /// gets to it.
        let since: DispatchTime
    }

    private struct State: @unchecked Sendable {  // only ever touched under `state`'s lock
        var jobs: [Queued] = []
        var head = 0
        /// The job running now: its task and when it started.
        var running: (taskID: UInt64, since: DispatchTime)?
        /// Set when a wait timed out while a job kept running: jobs no longer queue here.
        var released = false
        /// Jobs routed here, not counting those of tasks waiting in `runUntilIdle` (`ignored`).
        var routed = 0
        var ran = 0
        var recentTasks: [UInt64] = []
        var ignored: [UInt64: Int] = [:]
        var waiters: [OneShot<Outcome>] = []
        /// Found by the watchdog; reported on the test's task by the next settle or the scope's end.
        var failures: [String] = []
        /// Whether this scope already reported that the enqueue hook is not its router's.
        var hookReported = false
        /// Whether this scope already reported work of a task made before it (see `noteUntracked`).
        var untrackedReported = false
        /// For a scope on the main queue: whether a turn is posted and has not ended (see `postTurn`).
        var turnPosted = false

        var queuedCount: Int { jobs.count - head }
        /// The job queued longest, not started yet.
        var oldestQueued: Queued? { head < jobs.count ? jobs[head] : nil }
        var pending: Int { queuedCount + (running == nil ? 0 : 1) }

        mutating func popFirst() -> Queued? {
            guard head < jobs.count else { return nil }
            defer {
                head += 1
                if head == jobs.count {
                    jobs.removeAll(keepingCapacity: true)
                    head = 0
                } else if head >= 1_024, head * 2 >= jobs.count {
                    // Never empty (tasks that keep each other runnable): drop what ran.
                    jobs.removeFirst(head)
                    head = 0
                }
            }
            return jobs[head]
        }

        mutating func takeWaitersIfIdle() -> [OneShot<Outcome>] {
            guard pending == 0 else { return [] }
            defer { waiters = [] }
            return waiters
        }
    }

    package let id: UInt64
    /// Seconds of real time: how long `runUntilIdle` waits, and how long a job may block the
    /// executor while others wait behind it.
    package let bound: Double
    /// Whether the scope's jobs run on the main queue, in turn with the main actor's.
    package let onMainQueue: Bool
    /// The test that opened the scope, if the test framework says (see `JobRouter.currentTest`).
    package let test: String?
    private let state = LockedState(State())
    private let queue: DispatchQueue
    private let watchdog: Watchdog
    private static let key = DispatchSpecificKey<UInt64>()

    package init(id: UInt64, bound: Double, onMainQueue: Bool = false, test: String? = nil) {
        self.id = id
        self.bound = bound
        self.onMainQueue = onMainQueue
        self.test = test
        queue = DispatchQueue(label: "BridgesTesting.withSerialTasks.\(id)")
        queue.setSpecific(key: Self.key, value: id)
        if onMainQueue { MainQueue.mark(queue) }
        let timer = DispatchSource.makeTimerSource(queue: .global())
        watchdog = Watchdog(timer: timer)
        let interval = DispatchTimeInterval.milliseconds(max(1, Int(bound * 250)))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.watch() }
        timer.resume()
    }

    /// A DispatchSource may be cancelled from any thread (libdispatch synchronises it).
    private struct Watchdog: @unchecked Sendable {
        let timer: any DispatchSourceTimer
    }

    /// Written out: the protocol's default is available only from macOS 14 / iOS 17.
    package func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }

    /// Returns true the first time only: the scope reports a replaced hook once.
    package func noteHookReported() -> Bool {
        state.withLock { state in
            defer { state.hookReported = true }
            return !state.hookReported
        }
    }

    /// The scope ended: no more watching.
    package func stop() { watchdog.timer.cancel() }

    /// Work of a task made before the scope opened, which the scope cannot track.
    package enum Untracked {
        /// The scope's code resumed the task (a continuation it waits on, a stream it consumes).
        case resumedBeforeScope(UInt64)
        /// The task, made by this scope's test, resumed one of the scope's tasks.
        case resumedTheScope(UInt64)
        /// The task, made by this scope's test, left the main actor and started work of its own.
        case leftTheMainActor(UInt64)

        package var task: UInt64 {
            switch self {
            case .resumedBeforeScope(let task), .resumedTheScope(let task), .leftTheMainActor(let task): task
            }
        }
    }

    /// Records, once per scope, a failure for work the scope cannot see: reported on the test's
    /// task by the next `runUntilIdle()` or by the end of the scope.
    package func noteUntracked(_ what: Untracked) {
        let what =
            switch what {
            case .resumedBeforeScope(let task):
                "this scope's code resumed task #\(task), which was created before the scope opened"
            case .resumedTheScope(let task):
                "task #\(task) of this test was created before the scope opened, and it resumed a task of the scope"
            case .leftTheMainActor(let task):
                "task #\(task) of this test was created before the scope opened; it left the main actor and started work of its own"
            }
        let message =
            "withSerialTasks: \(what). It runs beside the scope's tasks, untracked: runUntilIdle() does not wait for it, and it is not serialised with them. "
            + "Create what starts it (a view model whose init subscribes, a Recorder, a suite-level `let`) inside withSerialTasks { … }."
        state.withLock { state in
            guard !state.untrackedReported else { return }
            state.untrackedReported = true
            state.failures.append(message)
        }
    }

    /// Failures the watchdog found since the last call.
    package func takeFailures() -> [String] {
        state.withLock { state in
            defer { state.failures = [] }
            return state.failures
        }
    }

    private func watch() {
        var mainBlocked = false
        let handOver = state.withLock { state -> [Queued] in
            guard !state.released, state.queuedCount > 0 else { return [] }
            let failure: String
            if let running = state.running, Self.seconds(since: running.since) > bound {
                failure =
                    "withSerialTasks: a job of task #\(running.taskID) has been running on this test's serial executor for \(Int(Self.seconds(since: running.since))) s without returning, "
                    + "while \(state.queuedCount) job(s) waited behind it. It blocks its thread (a semaphore, a lock, DispatchQueue.sync, a thread join), "
                    + "most likely waiting for one of them: the tasks of a withSerialTasks scope take turns on one serial executor. "
                    + "The scope no longer serialises: its queued and later jobs run on the global executor, so the test can end."
            } else if onMainQueue, state.running == nil, let oldest = state.oldestQueued,
                Self.seconds(since: oldest.since) > bound
            {
                failure =
                    "withSerialTasks: \(state.queuedCount) job(s) of this @MainActor test's scope have waited \(Int(Self.seconds(since: oldest.since))) s for the main actor, which never got to them. "
                    + "A main-actor job blocks the main thread (a semaphore, a lock, DispatchQueue.sync), most likely the test body waiting for one of them: "
                    + "in a scope opened on the main actor, the scope's tasks take turns with the main actor's jobs. "
                    + "The scope no longer serialises: its queued and later jobs run on the global executor, so the test can end."
                mainBlocked = true
            } else {
                return []
            }
            state.released = true
            var handOver: [Queued] = []
            while let queued = state.popFirst() { handOver.append(queued) }
            state.failures.append(failure)
            return handOver
        }
        // With the main thread blocked, every main-actor job of the process waits: the jobs the
        // blocker waits for run on Dispatch threads, which do not depend on the cooperative pool
        // (other tests may hold all of its threads).
        for queued in handOver {
            if mainBlocked {
                DispatchQueue.global().async { queued.job.runSynchronously(on: self.asUnownedSerialExecutor()) }
            } else {
                Self.runElsewhere(queued, on: self)
            }
        }
    }

    private static func seconds(since time: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - min(time.uptimeNanoseconds, DispatchTime.now().uptimeNanoseconds))
            / 1e9
    }

    /// Whether the calling code runs as one of this scope's jobs.
    package var isOnQueue: Bool { DispatchQueue.getSpecific(key: Self.key) == id }
    /// Whether the calling code runs as a job of any scope (a scope on the main queue included:
    /// its jobs run in the main queue's turn, and are not the main actor's).
    package static var isOnAScopeQueue: Bool { DispatchQueue.getSpecific(key: key) != nil }
    package var isReleased: Bool { state.withLock { $0.released } }
    /// How many jobs have been routed here (see `State.routed`).
    package var routedCount: Int { state.withLock { $0.routed } }

    // MARK: - Jobs

    package func enqueue(_ job: UnownedJob, taskID: UInt64, original: JobRouter.Original?) {
        let queued = Queued(job: job, taskID: taskID, original: original, since: .now())
        enum Next { case elsewhere, onQueue, postTurn, inPostedTurn }
        let next = state.withLock { state -> Next in
            if state.released { return .elsewhere }
            state.jobs.append(queued)
            if state.ignored[taskID] == nil { state.routed += 1 }
            guard onMainQueue else { return .onQueue }
            if state.turnPosted { return .inPostedTurn }
            state.turnPosted = true
            return .postTurn
        }
        switch next {
        case .elsewhere: Self.runElsewhere(queued, on: self)
        case .onQueue: queue.async { self.runNext() }
        case .postTurn: postTurn()
        case .inPostedTurn: break
        }
    }

    /// For a scope on the main queue (see the top of the file): one main-queue job, a turn, runs
    /// every job the scope has queued by then and while it runs (as a queue drains its items in
    /// one turn), so that a tracked task runs to its next wait before the body's next main-actor
    /// job. One turn is posted at a time, and a turn ends after `mainTurnLimit` jobs, posting the
    /// next behind the main-actor jobs queued meanwhile: a scope that keeps itself busy (a task
    /// polling with `Task.yield()`) takes turns with the main actor, and neither starves the other.
    private func postTurn() {
        DispatchQueue.main.async {
            self.queue.sync {
                var ran = 0
                while ran < Self.mainTurnLimit, self.runNext() { ran += 1 }
            }
            let again = self.state.withLock { state -> Bool in
                state.turnPosted = !state.released && state.queuedCount > 0
                return state.turnPosted
            }
            if again { self.postTurn() }
        }
    }

    private static let mainTurnLimit = 256

    /// A job enqueued on this executor directly (a task whose current executor it became).
    package func enqueue(_ job: UnownedJob) {
        enqueue(job, taskID: _taskID(of: job), original: nil)
    }

    /// Runs the job queued first, if any (none: handed elsewhere on release, or run by an earlier
    /// turn on the main queue). Returns whether it ran one.
    @discardableResult
    private func runNext() -> Bool {
        guard
            let next = state.withLock({ state -> Queued? in
                guard let next = state.popFirst() else { return nil }
                state.running = (next.taskID, .now())
                return next
            })
        else { return false }
        next.job.runSynchronously(on: asUnownedSerialExecutor())
        let waiters = state.withLock { state -> [OneShot<Outcome>] in
            state.running = nil
            state.ran += 1
            if next.taskID != 0 { state.recentTasks.append(next.taskID) }
            if state.recentTasks.count > 4 { state.recentTasks.removeFirst() }
            return state.takeWaitersIfIdle()
        }
        for waiter in waiters { waiter.resume(.idle) }
        return true
    }

    private static func runElsewhere(_ queued: Queued, on executor: ScopeExecutor) {
        if let original = queued.original {
            original(queued.job)
        } else {
            DispatchQueue.global().async { queued.job.runSynchronously(on: executor.asUnownedSerialExecutor()) }
        }
    }

    // MARK: - Waiting

    /// Jobs of the task that calls `runUntilIdle` do not count as progress of the others.
    package func ignore(_ task: UInt64?) {
        guard let task else { return }
        state.withLock { $0.ignored[task, default: 0] += 1 }
    }

    package func unignore(_ task: UInt64?) {
        guard let task else { return }
        state.withLock { state in
            let count = (state.ignored[task] ?? 1) - 1
            state.ignored[task] = count > 0 ? count : nil
        }
    }

    /// Suspends until no job of this scope is queued or running, or until `deadline`.
    ///
    /// The idle check must run after the waiting task has really suspended: a continuation
    /// resumed while its task is still inside `withUnsafeContinuation` lets the task go on where
    /// it is (no hop onto the queue), and ThreadSanitizer cannot see the runtime's handshake for
    /// that case. From one of this scope's jobs the check is queued behind that very job. From
    /// anywhere else (the scope's first hop, an actor-isolated test) a helper task of the scope
    /// waits instead, and the caller awaits its value: the runtime's own task-completion path.
    package func waitUntilIdle(deadline: DispatchTime) async -> Outcome {
        if isOnQueue || isReleased {
            return await waitOnQueue(deadline: deadline)
        }
        // Created by a task of this scope, so the helper is attributed to it (and so is the
        // caller, resumed by the helper).
        return await Task.detached { [self] in
            let helper = currentTaskID()
            ignore(helper)
            defer { unignore(helper) }
            return await waitOnQueue(deadline: deadline)
        }.value
    }

    private func waitOnQueue(deadline: DispatchTime) async -> Outcome {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Outcome, Never>) in
            let waiter = OneShot(continuation)
            let ran = state.withLock { state -> Int in
                state.waiters.append(waiter)
                return state.ran
            }
            queue.async { [self] in  // behind the job running this (see above)
                for waiter in state.withLock({ $0.takeWaitersIfIdle() }) { waiter.resume(.idle) }
            }
            DispatchQueue.global().asyncAfter(deadline: deadline) { [self] in
                timeOut(waiter, ranBefore: ran)
            }
        }
    }

    private func timeOut(_ waiter: OneShot<Outcome>, ranBefore: Int) {
        let message = state.withLock { state -> String? in
            guard let index = state.waiters.firstIndex(where: { $0 === waiter }) else { return nil }
            state.waiters.remove(at: index)
            if let running = state.running, Self.seconds(since: running.since) > bound / 2 {
                return
                    "runUntilIdle() gave up: a job of task #\(running.taskID) has been running for \(Int(Self.seconds(since: running.since))) s without returning. "
                    + "It blocks its thread (a semaphore, a lock, DispatchQueue.sync) on something that does not happen: work on a thread or a Dispatch queue is not tracked."
            }
            let tasks = state.recentTasks.map { "#\($0)" }.joined(separator: ", ")
            if state.ran == ranBefore && state.running == nil {
                return
                    "runUntilIdle() gave up: \(state.queuedCount) job(s) are queued on this test's serial executor and none ran while it waited: no thread was free to run them (an overloaded machine, or threads blocked elsewhere)."
            }
            return
                "runUntilIdle() gave up: tracked tasks never settled (\(state.ran - ranBefore) job(s) ran while it waited, most recently of tasks \(tasks)). "
                + "A tracked task keeps itself runnable, e.g. polling with Task.yield() for work it cannot see finish: work on a thread or a Dispatch queue, "
                + "or a task created outside the scope, is not tracked."
        }
        if let message { waiter.resume(.timedOut(message)) }
    }

    /// Moves the calling task onto this scope's queue: from here on it takes turns with the
    /// tasks it starts instead of running beside them.
    package func hop(deadline: DispatchTime) async -> Outcome {
        while !isOnQueue && !isReleased {
            if case .timedOut(let message) = await waitUntilIdle(deadline: deadline) { return .timedOut(message) }
        }
        return .idle
    }

    /// Suspends until everything queued on the main actor before this call has run, or until
    /// `deadline` (then returns false). The marker is a main-actor job of the lowest priority,
    /// so that the main executor runs every job queued before it first, whether it orders its
    /// jobs by arrival or by priority.
    package static func mainRound(deadline: DispatchTime) async -> Bool {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Bool, Never>) in
            let waiter = OneShot(continuation)
            Task.detached(priority: .background) { @MainActor in waiter.resume(true) }
            DispatchQueue.global().asyncAfter(deadline: deadline) { waiter.resume(false) }
        }
    }
}
