import BridgesTesting
import Dispatch
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct QuiescenceOnTheMainActorTests {
    @MainActor @Test func runUntilIdle_fromTheMainActor_waitsForNonisolatedTasks() async {
        let log = Collected<Int>()
        await withSerialTasks {
            Task.detached {
                log.append(1)
                Task { log.append(2) }
            }
            await runUntilIdle()
            #expect(log.values == [1, 2])
        }
    }

    @Test func runUntilIdle_outsideWithSerialTasks_failsInsteadOfPretending() async {
        await withKnownIssue {
            await runUntilIdle()
        }
    }
}
