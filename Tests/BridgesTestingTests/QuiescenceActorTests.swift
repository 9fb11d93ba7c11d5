import BridgesTesting
import Dispatch
import Testing

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
