import CBridgesRuntime
import Dispatch
import Foundation
import TestSupport
import Testing

@testable import Bridges

/// A bridge reads the task-local diagnostics handler only once some handler was ever installed
/// in the process (`Diagnostics.withHandler`); before that none can be bound, and the read is
/// skipped. Each test runs in a fresh process (an exit test), because in
/// this one the test support has long installed handlers.
@Suite("Diagnostics: the task-local is read only once a handler was installed", .timeLimit(.minutes(3)))
struct DiagnosticsHandlerFlagTests {
    @Test func aFreshProcess_skipsTheRead_thenBridgesMadeInsideWithHandlerCaptureIt() async {
        await #expect(processExitsWith: .success) {
            precondition(!_bridges_diagnosticsHandlerEverInstalled(), "a fresh process has no handler installed")
            precondition(CallSite(fileID: "Fresh.swift", line: 1).handler == nil)
            let reports = Collected<BridgeDiagnostic.Kind>()
            let site = Diagnostics.withHandler({ reports.append($0.kind) }) {
                precondition(_bridges_diagnosticsHandlerEverInstalled())
                return CallSite(fileID: "Scoped.swift", line: 2)
            }
            precondition(site.handler != nil, "a bridge made inside withHandler captures its handler")
            site.report(.callbackDropped, "test", bridge: nil)
            precondition(reports.values == [.callbackDropped], "the report reaches the scope's handler")
            precondition(
                CallSite(fileID: "After.swift", line: 3).handler == nil, "outside the scope: the default handler")
        }
    }

    /// The synchronous `withHandler` on a plain thread (no task: the task-local lives in the
    /// thread's fallback storage) sets the flag before binding too.
    @Test func onAThreadOutsideAnyTask_theSynchronousFormIsSeenToo() async {
        await #expect(processExitsWith: .success) {
            let done = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var captured: (before: Bool, inside: Bool)?
            Thread {
                let before = CallSite(fileID: "Thread.swift", line: 1).handler != nil
                let inside = Diagnostics.withHandler({ _ in }) {
                    CallSite(fileID: "Thread.swift", line: 2).handler != nil
                }
                captured = (before, inside)
                done.signal()
            }.start()
            blockThread(until: done)
            precondition(captured?.before == false, "no handler before withHandler")
            precondition(
                captured?.inside == true, "a bridge made inside the synchronous form on a thread captures its handler")
        }
    }

    /// The case a "handler currently installed" count would get wrong: a task made inside the
    /// scope inherits the handler and creates its bridge after the scope has ended.
    @Test func aTaskMadeInsideTheScope_createsItsBridgeAfterTheScopeEnded_andStillReportsThere() async {
        await #expect(processExitsWith: .success) {
            let reports = Collected<BridgeDiagnostic.Kind>()
            let go = Signal()
            let task = Diagnostics.withHandler({ reports.append($0.kind) }) {
                Task {
                    await go.wait()
                    return CallSite(fileID: "Later.swift", line: 4)
                }
            }
            go.open()  // the scope has returned
            let site = await task.value
            precondition(site.handler != nil, "the task inherited the handler")
            site.report(.callbackCalledTwice, "test", bridge: nil)
            precondition(reports.values == [.callbackCalledTwice])
        }
    }
}
