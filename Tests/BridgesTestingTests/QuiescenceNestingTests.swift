import BridgesTesting
import Dispatch
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct QuiescenceNestingTests {
    @Test func nestedScopes_keepTheOuterScopeTracking() async {
        let log = Collected<String>()
        await withSerialTasks {
            await withSerialTasks {
                Task { log.append("inner") }
                await runUntilIdle()
            }
            Task { log.append("outer") }
            await runUntilIdle()
            #expect(log.values == ["inner", "outer"])
        }
    }
}
