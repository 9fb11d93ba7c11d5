/// Runs `operation` with every task it starts executed one job at a time on a serial executor
/// that BridgesTesting watches, so that ``runUntilIdle(fileID:line:)`` can wait until that work
/// has settled, without real sleeps or `Task.yield()` loops.
///
/// Before:
/// ```swift
/// presenter.remove(item)                  // starts Task { await facade.remove(item) }
/// for _ in 0..<100 { await Task.yield() } // and hopes
/// ```
/// After:
/// ```swift
/// await withSerialTasks {
///     presenter.remove(item)
///     await runUntilIdle()
///     #expect(facade.items.isEmpty)
/// }
/// ```
///
/// Tracked, until the scope ends, are: the task that calls this; every task and job enqueued
/// while a tracked task runs (tasks it creates with `Task {}`, `Task.detached {}`, `async let`
/// or a group, tasks whose continuations it resumes, default actors it calls); and a tracked
/// task resumed later from any thread (a legacy API's queue resuming its continuation). Their
/// jobs run one at a time, in the order they became runnable, on one serial queue; the test's
/// own task takes turns with them. ``TestClock`` waits on the same queue, before and after waking
/// each sleeper, until the woken task has slept again, finished, or waits on something else.
///
/// Start the code under test inside the scope: a task started before it runs beside the test
/// until tracked code resumes it.
///
/// - Important: The exact guarantee of ``runUntilIdle(fileID:line:)``, and its limits:
///   - **Guaranteed**: on return, no tracked job is queued or running. Each tracked task has
///     finished or is suspended waiting for something no tracked task will do next.
///   - **Not covered**: the main actor and actors with custom executors (an actor-isolated
///     test keeps running on its actor and only waits for idleness), tasks waiting in a
///     real-time `Task.sleep` (not runnable, so they do not delay idleness), and code running on
///     threads and queues of its own. `runUntilIdle()` does not wait for those.
///   - Do not block a tracked task synchronously on another tracked task (a semaphore waiting
///     for a `Task`): with one serial queue that is a deadlock.
///   - The hook into the runtime is process-wide, installed once and inert outside scopes.
///     Scopes in tests running in parallel share the queue, so `runUntilIdle()` may also wait
///     for another test's tracked work (never for untracked work). A task is recognised by its
///     address; while a scope lasts, an unrelated task allocated where a finished tracked task
///     was may be serialised with it (harmless unless it blocks). It relies on
///     `swift_task_enqueueGlobal_hook`, the exported runtime variable pointfree's
///     `withMainSerialExecutor` also uses; do not combine the two.
public func withSerialTasks<R>(
    isolation: isolated (any Actor)? = #isolation,
    _ operation: () async throws -> R
) async rethrows -> R {
    XCTestFailureRecorder.start()
    let executor = SerialTestExecutor.shared
    let scope = executor.enterScope()
    defer { executor.leaveScope(scope) }
    return try await SerialTestExecutor.$scope.withValue(
        scope.id,
        operation: {
            if isolation == nil {
                // Hop onto the serial queue, so that from here on this task takes turns with
                // the tasks it starts instead of running beside them.
                await executor.hop()
            } else {
                // An actor-isolated test keeps running on its actor; it only starts from idle.
                await executor.waitUntilIdle()
            }
            return try await operation()
        },
        isolation: isolation
    )
}

/// Waits until no task tracked by ``withSerialTasks(isolation:_:)`` can run: every job queued
/// for them has run, including the jobs those jobs queued in turn.
///
/// On return, each tracked task has either finished or is suspended waiting for something that
/// no tracked task will do next (a continuation a legacy API holds, a channel nobody sends to,
/// a ``TestClock`` sleep that needs `advance`). See ``withSerialTasks(isolation:_:)`` for what is
/// not covered. Called outside `withSerialTasks`, it records a test failure and returns at once.
public func runUntilIdle(fileID: String = #fileID, line: UInt = #line) async {
    guard SerialTestExecutor.isTracking else {
        _reportTestFailure(
            "runUntilIdle() needs withSerialTasks { … } around the test: without it no task is tracked",
            fileID: fileID, line: line
        )
        return
    }
    await SerialTestExecutor.shared.waitUntilIdle()
}
