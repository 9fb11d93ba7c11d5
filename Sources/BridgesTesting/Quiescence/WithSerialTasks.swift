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
/// Tracked are: the task that calls this, every task created inside it (`Task {}`,
/// `Task.detached {}`, `async let`, task groups, and tasks created by those), and every task
/// that tracked code resumes. Their jobs run one at a time, in the order they became runnable,
/// on one serial queue. ``TestClock`` uses the same executor to wait, after waking each sleeper,
/// until the woken task has slept again, finished, or is waiting on something else.
///
/// - Important: The exact guarantee, and its limits:
///   - **Covered**: nonisolated async code and default actors, whatever thread resumes them
///     (a legacy callback on a DispatchQueue that resumes a tracked continuation is fine: the
///     resumed task runs on the serial queue).
///   - **Not covered**: work on the main actor or on actors with custom executors, tasks waiting
///     in a real-time `Task.sleep` (they are not runnable, so they do not delay idleness), and
///     code running on threads and queues of its own. `runUntilIdle()` does not wait for those.
///   - Do not block a tracked task synchronously on another tracked task (a semaphore waiting
///     for a `Task`): with one serial queue that is a deadlock.
///   - The hook into the runtime is process-wide. Scopes in tests running in parallel share the
///     queue, so `runUntilIdle()` may also wait for the other test's tracked work (never for
///     untracked work). It relies on `swift_task_enqueueGlobal_hook`, the exported runtime
///     variable pointfree's `withMainSerialExecutor` also uses; do not combine the two.
public func withSerialTasks<R>(
    isolation: isolated (any Actor)? = #isolation,
    _ operation: () async throws -> R
) async rethrows -> R {
    XCTestFailureRecorder.start()
    let executor = SerialTestExecutor.shared
    let scope = executor.enterScope()
    defer { executor.leaveScope(scope) }
    return try await SerialTestExecutor.$scope.withValue(
        scope,
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
