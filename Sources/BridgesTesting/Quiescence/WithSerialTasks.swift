import BridgesQuiescence
import Dispatch

/// Runs `operation` with every task it starts executed one job at a time on a serial executor
/// that belongs to this scope, so that ``runUntilIdle(fileID:line:)`` can wait until that work
/// has settled, without real sleeps or `Task.yield()` loops.
///
/// Before:
/// <!-- snippet: test — with a `presenter` and its `facade` -->
/// ```swift
/// presenter.remove(item)                  // starts Task { await facade.remove(item) }
/// for _ in 0..<100 { await Task.yield() } // and hopes
/// ```
/// After:
/// <!-- snippet: test — with a `presenter` and its `facade` -->
/// ```swift
/// await withSerialTasks {
///     presenter.remove(item)
///     await runUntilIdle()
///     #expect(facade.items.isEmpty)
/// }
/// ```
///
/// Tracked, until the scope ends, are: the task that calls this; every task created by a
/// tracked task (`Task {}`, `Task.detached {}`, `async let`, groups); default actors they call;
/// and a tracked task resumed later from any thread (a legacy API's queue resuming its
/// continuation). A task is known by the runtime's task id, never reused. Their jobs run one
/// at a time, in the order they became runnable, on the scope's own serial executor; the
/// test's own task takes turns with them, a `@MainActor` test body included: its main-actor
/// jobs and the scope's jobs interleave only where the body suspends (`await`), so two
/// synchronous calls of the body never have a tracked task (a ``Recorder``'s) run between
/// them. ``TestClock`` settles the same way before and after waking each sleeper.
///
/// Start the code under test inside the scope: a task created before it (by a view model whose
/// `init` subscribes, made on the line before, or a suite-level `let`) runs beside the test,
/// untracked. The scope reports it, once, at this call's line or the next `runUntilIdle()`'s,
/// when it sees it: when the scope's code resumes such a task, and, under Swift Testing, when
/// a task of this test made before the scope resumes the scope's tasks, or leaves the main actor
/// and starts work of its own there. (A main-actor task made before the scope that stays on the
/// main actor is not seen: `runUntilIdle()` drains it by its rounds through the main actor.)
///
/// - Important: What runs in parallel, and the exact guarantee:
///   - **Parallel tests**: each scope has its own executor. Tests in parallel (Swift Testing's
///     default) never serialise each other's tasks or wait for each other's work.
///   - **Guaranteed**: when ``runUntilIdle(fileID:line:)`` returns, no job of the scope is
///     queued or running, and the main actor has run everything queued on it until two rounds
///     through the main queue in a row saw no tracked job run. Each tracked task has finished
///     or is suspended waiting for something no tracked task will do next.
///   - **A `@MainActor` test body** (the scope opened on the main actor): the scope's jobs run
///     on the main queue, which is the main actor's executor, each in its turn with the main
///     actor's jobs. So main-actor code (the body's, a `@MainActor` view model's `Task {}`)
///     and the tracked tasks' jobs never run at the same time, and they interleave only at
///     suspension points. A step that a task made on the main actor runs off it (a nonisolated
///     `async` function it awaits) runs beside them, on the global executor, and
///     `runUntilIdle` waits for it. Parallel tests keep their own scopes (their jobs share the
///     main thread, as their main-actor bodies already do). Two things cannot work in such a
///     scope, because a tracked task's code runs on the main queue: blocking the main thread
///     until a tracked task does something (a semaphore in the body: after the bound the scope
///     reports it and stops serialising, so the test ends), and a tracked task that waits for
///     the main queue synchronously (`DispatchQueue.main.sync` traps, as it does on the main
///     actor). Test code under test that does either from a nonisolated body.
///   - **The main actor, from a nonisolated body**: jobs on the main actor run on the main
///     actor as always, beside the scope's own (which run on the scope's queue). Whatever the
///     body's isolation, the runtime offers no hook on main-actor enqueues
///     (Swift 6.3 does not call `swift_task_enqueueMainExecutor_hook`), so `runUntilIdle`
///     drains the main actor by rounds (a lowest-priority main-actor job as a marker) and counts
///     the jobs that leave the main actor (enqueued from the main queue with no current task)
///     and the later jobs of those tasks off the main actor (each `Task.yield()`, each return
///     from an actor), until two rounds in a row saw nothing of the scope run: a `@MainActor`
///     view model's `Task {}` has run up to its next suspension, wherever its nonisolated code
///     took it. Such a task is known only by having left the main actor until it enqueues work
///     as the current task (a child task, a resumed continuation), so until then every open
///     scope waits for it, including one of another test running at the same time. A main-actor
///     task that hops main → main more than twice in a row without any other job in between is
///     not waited for.
///   - **Not covered**: code on threads and Dispatch queues of its own, tasks created there or
///     before the scope, actors with custom executors, task executor preferences, and real-time
///     `Task.sleep` (not runnable, so it does not delay idleness). `runUntilIdle()` does not
///     wait for them. A task created before the scope is not pulled in when tracked code
///     resumes it (it is reported, see above): start the code under test inside the scope.
///   - **Never a hang**: `runUntilIdle` waits at most a bound of real time (30 s by default,
///     `withSerialTasks(timeout:)`, ``runUntilIdle(timeout:fileID:line:)``), then records a
///     failure saying what it was waiting for. A tracked task that blocks its thread waiting for
///     another tracked task (a semaphore, `DispatchQueue.sync`) would deadlock a serial executor:
///     a watchdog notices a job that has run longer than the bound with others queued behind
///     it, records a failure, and the scope stops serialising (its queued jobs go to the global
///     executor), so the test ends.
///   - The hook into the runtime (`swift_task_enqueueGlobal_hook`) is process-wide and chained:
///     the first scope to open saves the hook it finds and forwards every job outside a scope to
///     it; the last to close puts it back. Point-Free's `withMainSerialExecutor` uses the same
///     variable, so the two cannot overlap in time (a scope that meets one fails the test and
///     names it); one before or after the other, in either order, works.
///   - Nested scopes share the outer scope.
public func withSerialTasks<R>(
    isolation: isolated (any Actor)? = #isolation,
    fileID: String = #fileID,
    line: UInt = #line,
    _ operation: () async throws -> R
) async rethrows -> R {
    try await withSerialTasks(isolation: isolation, bound: defaultBound, fileID: fileID, line: line, operation)
}

/// ``withSerialTasks(isolation:fileID:line:_:)`` with your own bound of real time for
/// ``runUntilIdle(fileID:line:)`` and for a job that blocks the scope's executor (30 s by default).
@available(BridgesClock, *)
public func withSerialTasks<R>(
    isolation: isolated (any Actor)? = #isolation,
    timeout: Duration,
    fileID: String = #fileID,
    line: UInt = #line,
    _ operation: () async throws -> R
) async rethrows -> R {
    try await withSerialTasks(isolation: isolation, bound: seconds(timeout), fileID: fileID, line: line, operation)
}

private func withSerialTasks<R>(
    isolation: isolated (any Actor)?,
    bound: Double,
    fileID: String,
    line: UInt,
    _ operation: () async throws -> R
) async rethrows -> R {
    XCTestFailureRecorder.start()
    if JobRouter.currentScope != nil { return try await operation() }  // nested: the outer scope tracks it
    TestIdentity.install()
    // A main-actor body: the scope's jobs run on the main queue, in turn with the body's own.
    let onMainActor = isolation.map { $0 === MainActor.shared } ?? false
    let (scope, openFailure) = JobRouter.shared.openScope(bound: bound, onMainQueue: onMainActor)
    if let openFailure { _reportTestFailure(openFailure, fileID: fileID, line: line) }
    defer {
        if let failure = JobRouter.shared.close(scope) { _reportTestFailure(failure, fileID: fileID, line: line) }
        // What the scope noticed after the body returned (below), until it closed.
        for failure in scope.takeFailures() { _reportTestFailure(failure, fileID: fileID, line: line) }
    }
    await JobRouter.shared.setWatermark(of: scope)
    return try await JobRouter.$scope.withValue(
        scope.id,
        operation: {
            let deadline = DispatchTime.now() + bound
            let outcome: ScopeExecutor.Outcome
            if isolation == nil {
                // Hop onto the scope's queue, so that from here on this task takes turns with
                // the tasks it starts instead of running beside them.
                outcome = await scope.hop(deadline: deadline)
            } else {
                // An actor-isolated test keeps running on its actor; it only starts from idle.
                outcome = await scope.waitUntilIdle(deadline: deadline)
            }
            if case .timedOut(let message) = outcome { _reportTestFailure(message, fileID: fileID, line: line) }
            defer { for failure in scope.takeFailures() { _reportTestFailure(failure, fileID: fileID, line: line) } }
            return try await operation()
        },
        isolation: isolation
    )
}

@available(BridgesClock, *)
private func seconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) + Double(attoseconds) / 1e18
}

/// The default bound of ``runUntilIdle(fileID:line:)``, in seconds of real time.
let defaultBound: Double = 30

/// Waits until no task tracked by ``withSerialTasks(isolation:fileID:line:_:)`` can run: every job queued
/// for them has run, including the jobs those jobs queued in turn, and the main actor has run
/// what they queued there.
///
/// On return, each tracked task has either finished or is suspended waiting for something that
/// no tracked task will do next (a continuation a legacy API holds, a channel nobody sends to,
/// a ``TestClock`` sleep that needs `advance`). See ``withSerialTasks(isolation:fileID:line:_:)`` for what is
/// not covered. Called outside `withSerialTasks`, it records a test failure and returns at once.
/// If the work has not settled after 30 s of real time, it records a failure that says what it
/// was waiting for, and returns.
public func runUntilIdle(fileID: String = #fileID, line: UInt = #line) async {
    await runUntilIdle(seconds: nil, fileID: fileID, line: line)
}

/// ``runUntilIdle(fileID:line:)`` with your own bound of real time.
///
/// The bound is a safety net, never a way to wait: work that settles returns at once. Past it,
/// a failure names what did not settle: a tracked job that blocks its thread (then the scope
/// stops serialising, so the test can end), tracked tasks that keep running (a `Task.yield()`
/// polling loop waiting for untracked work), or a main actor that does not run.
@available(BridgesClock, *)
public func runUntilIdle(timeout: Duration, fileID: String = #fileID, line: UInt = #line) async {
    await runUntilIdle(seconds: seconds(timeout), fileID: fileID, line: line)
}

func runUntilIdle(seconds: Double?, fileID: String, line: UInt) async {
    guard let scope = JobRouter.currentScope else {
        _reportTestFailure(
            "runUntilIdle() needs withSerialTasks { … } around the test: without it no task is tracked",
            fileID: fileID, line: line
        )
        return
    }
    for failure in await scope.settle(deadline: .now() + (seconds ?? scope.bound)) {
        _reportTestFailure(failure, fileID: fileID, line: line)
    }
}

extension ScopeExecutor {
    /// Waits until the scope is idle and two rounds through the main actor in a row saw no job
    /// of the scope run. Returns the failures to report: the watchdog's, and a message if
    /// `deadline` passed first.
    func settle(deadline: DispatchTime) async -> [String] {
        let me = currentTaskID()
        ignore(me)
        defer { unignore(me) }
        // A replaced hook is the reason, not the machine: say so before and instead of a timeout.
        var hookFailure = JobRouter.shared.checkHook(for: self).map { [$0] } ?? []
        func gaveUp(_ message: String) -> [String] {
            hookFailure += JobRouter.shared.checkHook(for: self).map { [$0] } ?? []
            return takeFailures() + (hookFailure.isEmpty ? [message] : hookFailure)
        }
        var quietRounds = 0
        while quietRounds < 2 {
            if case .timedOut(let message) = await waitUntilIdle(deadline: deadline) { return gaveUp(message) }
            let mark = routedCount
            let hops = JobRouter.shared.mainHops
            let hopMark = hops.done
            guard await Self.mainRound(deadline: deadline) else {
                return gaveUp(
                    "runUntilIdle() gave up: the main actor did not run a marker job in time; something blocks the main thread"
                )
            }
            guard await hops.waitUntilNoneInFlight(deadline: deadline) else {
                return gaveUp("runUntilIdle() gave up: a task that left the main actor did not finish its step in time")
            }
            quietRounds = routedCount == mark && hops.done == hopMark ? quietRounds + 1 : 0
        }
        return takeFailures() + hookFailure
    }
}

/// Inside a ``withSerialTasks(isolation:fileID:line:_:)`` scope, what ``runUntilIdle(fileID:line:)`` does;
/// outside one, nothing. Used by helpers that settle before they look (TestClock, Recorder,
/// LeakTracker).
func settleIfTracked(fileID: String, line: UInt) async {
    guard let scope = JobRouter.currentScope else { return }
    for failure in await scope.settle(deadline: .now() + scope.bound) {
        _reportTestFailure(failure, fileID: fileID, line: line)
    }
}
