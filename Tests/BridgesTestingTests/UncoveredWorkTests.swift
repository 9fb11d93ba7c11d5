import Bridges
import BridgesTesting
import Dispatch
import TestSupport
import Testing

/// What a test is told when its scope meets work that quiescence cannot see: a failure that
/// says what `runUntilIdle` was waiting for, after a bound of real time, never a hang.
@Suite(.timeLimit(.minutes(3))) struct UncoveredWorkTests {
    /// A tracked task polls for a flag that a Dispatch queue would set: it never settles.
    @Test func runUntilIdle_whenATaskPollsForUntrackedWork_failsWithADiagnostic() async {
        let done = Collected<Bool>()
        await withSerialTasks {
            let poller = Task {
                while done.values.isEmpty { await Task.yield() }
            }
            await withKnownIssue {
                await runUntilIdle(timeout: .milliseconds(300))
            } matching: { issue in
                issue.comments.contains {
                    $0.rawValue.contains("never settled") && $0.rawValue.contains("Task.yield()")
                }
            }
            done.append(true)
            await poller.value
            await runUntilIdle()
        }
    }

    /// A tracked task blocks its thread waiting for another tracked task, which is queued behind
    /// it on the same serial executor: a deadlock. After the bound the scope reports it and stops
    /// serialising, so the second task runs, the first is unblocked, and the test ends.
    @Test func runUntilIdle_whenATrackedJobBlocksOnAnother_failsAndReleasesTheScope() async {
        let semaphore = DispatchSemaphore(value: 0)
        let log = Collected<String>()
        let reported = Collected<String>()
        // The whole scope is inside `withKnownIssue`: on a loaded machine `runUntilIdle` may give
        // up before the watchdog fires, and then the watchdog's report comes at the scope's end.
        await withKnownIssue {
            await withSerialTasks(timeout: .seconds(2)) {
                let waiter = Task {
                    blockThread(until: semaphore)
                    log.append("unblocked")
                }
                let signaller = Task {
                    log.append("signal")
                    semaphore.signal()
                }
                await runUntilIdle()
                await signaller.value
                await waiter.value
            }
        } matching: { issue in
            for comment in issue.comments { reported.append(comment.rawValue) }
            return issue.comments.contains {
                $0.rawValue.contains("runUntilIdle() gave up") || $0.rawValue.contains("withSerialTasks:")
            }
        }
        #expect(log.values == ["signal", "unblocked"])
        #expect(reported.values.contains { $0.contains("without returning") && $0.contains("no longer serialises") })
    }
}
