import BridgesTesting
import ConcurrencyExtras
import Testing

/// The smallest sequence in which BridgesTesting and `withMainSerialExecutor` used to break each
/// other for the rest of the process: a scope, then `withMainSerialExecutor`, then a test that
/// uses neither and expects ordinary tasks off the main queue. The whole package is one
/// `.serialized` hierarchy (`InteropTests`), so nothing else overlaps these steps.
extension InteropTests {
    @Suite(.serialized) struct Repro {
        @Test func step1_aScopeLeavesTheHookAsItFoundIt() async {
            #expect(enqueueHook() == nil)
            await withSerialTasks {
                Task {}
                await runUntilIdle()
            }
            #expect(enqueueHook() == nil)
        }

        @MainActor @Test func step2_withMainSerialExecutorLeavesTheHookAsItFoundIt() async {
            await withMainSerialExecutor { await Task.yield() }
            #expect(enqueueHook() == nil)
            #expect(!uncheckedUseMainSerialExecutor)
        }

        @Test func step3_ordinaryTasksRunOffTheMainQueue() async {
            #expect(await !detachedTaskRunsOnMainQueue())
        }
    }
}
