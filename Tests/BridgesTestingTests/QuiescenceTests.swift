import BridgesTesting
import Dispatch
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct QuiescenceTests {
    @Test func runUntilIdle_whenTasksChain_waitsForAll() async {
        let log = Collected<Int>()
        await withSerialTasks {
            Task {
                log.append(1)
                Task {
                    log.append(2)
                    await withTaskGroup(of: Void.self) { group in
                        for i in 3...5 { group.addTask { log.append(i) } }
                    }
                    Task.detached { log.append(6) }
                }
            }
            #expect(log.values.isEmpty)  // serial: nothing ran while this task kept the turn
            await runUntilIdle()
            #expect(log.values.sorted() == [1, 2, 3, 4, 5, 6])
        }
    }

    @Test func runUntilIdle_whenResumedFromADispatchQueue_runsTheResumedTask() async {
        let log = Collected<String>()
        let gate = DispatchSemaphore(value: 0)
        await withSerialTasks {
            let task = Task {
                let value: String = await withCheckedContinuation { continuation in
                    DispatchQueue.global().async {
                        gate.wait()
                        continuation.resume(returning: "from a queue")
                    }
                }
                log.append(value)
            }
            await runUntilIdle()
            #expect(log.values.isEmpty)  // the task is waiting on the queue: idle, not finished
            gate.signal()
            await task.value
            await runUntilIdle()
            #expect(log.values == ["from a queue"])
        }
    }
}
