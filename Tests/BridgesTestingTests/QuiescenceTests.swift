import BridgesTesting
import Dispatch
import Testing

@Suite(.timeLimit(.minutes(3))) struct QuiescenceTests {
    @Test func runUntilIdle_whenTasksChain_waitsForAll() async {
        let log = Log<Int>()
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
        let log = Log<String>()
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

@Suite(.timeLimit(.minutes(3))) struct QuiescenceOnTheMainActorTests {
    @MainActor @Test func runUntilIdle_fromTheMainActor_waitsForNonisolatedTasks() async {
        let log = Log<Int>()
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

@Suite(.timeLimit(.minutes(3))) struct QuiescenceActorTests {
    actor Store {
        var items: [Int] = []
        func add(_ item: Int) { items.append(item) }
    }

    @Test func runUntilIdle_waitsForWorkOnDefaultActors() async {
        let store = Store()
        await withSerialTasks {
            for item in 0..<10 { Task { await store.add(item) } }
            await runUntilIdle()
            #expect(await store.items.sorted() == Array(0..<10))
        }
    }
}

@Suite(.timeLimit(.minutes(3))) struct QuiescenceNestingTests {
    @Test func nestedScopes_keepTheOuterScopeTracking() async {
        let log = Log<String>()
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
