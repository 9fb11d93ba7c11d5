import TestSupport
import Testing

@testable import Bridges

@Suite("runTask(weak:in:)", .timeLimit(.minutes(3)))
struct WeakOwnerRunTaskTests {
    @MainActor
    @Test func ownerAlive_applyReceivesTheResult_onTheMainActor() async {
        let updates = Collected<[Int]>()
        let deinitGate = Gate()
        var model: ItemsViewModel? = ItemsViewModel(updates: updates, deinitGate: deinitGate)
        let applied = Collected<Bool>()
        runTask(weak: model!, in: model!.bag) {
            [4, 5]
        } then: { owner, result in
            owner.items = (try? result.get()) ?? []
            applied.append(isOnMainActor())
        }
        await applied.wait(count: 1)
        #expect(applied.values == [true])
        #expect(model!.items == [4, 5])
        model = nil
        await deinitGate.wait()
    }

    @Test func ownerReleased_whileWorkSuspended_cancelsWork_neverApplies() async {
        let source = TrackedStream(Int.self)  // the "request": never answers, honours cancellation
        let deinitGate = Gate()
        let taskEnded = Gate()
        let applied = Collected<Int>()
        var owner: PlainOwner? = PlainOwner(deinitGate: deinitGate)
        runTask(weak: owner!, in: owner!.bag) { [source] in
            var iterator = source.stream.makeAsyncIterator()
            return await iterator.next() ?? -1
        } then: { [probe = DeinitSignal(taskEnded)] _, result in
            _ = probe
            applied.append((try? result.get()) ?? -2)
        }
        owner = nil
        await deinitGate.wait()
        await source.tornDown.wait()  // the work was cancelled by the owner's bag
        await taskEnded.wait()
        #expect(applied.count == 0)
    }

    @Test func cancelAll_beforeTheResult_neverApplies() async {
        let deinitGate = Gate()
        let taskEnded = Gate()
        let applied = Collected<Int>()
        let proceed = Gate()
        let owner = PlainOwner(deinitGate: deinitGate)
        runTask(weak: owner, in: owner.bag) {
            await proceed.wait()  // ignores cancellation, then returns a value
            return 1
        } then: { [probe = DeinitSignal(taskEnded)] _, result in
            _ = probe
            applied.append((try? result.get()) ?? -2)
        }
        owner.bag.cancelAll()
        proceed.open()
        await taskEnded.wait()
        #expect(applied.count == 0)
        #expect(owner.bag.isEmpty)
    }

    @Test func actorOwner_releasedDuringTheWork_isNotKeptAlive_neverApplies() async {
        let deinitGate = Gate()
        let taskEnded = Gate()
        let applied = Collected<Int>()
        let work = Gate()
        var owner: ActorOwner? = ActorOwner(deinitGate: deinitGate)
        await owner!.load(work: work, applied: applied, probe: DeinitSignal(taskEnded))
        owner = nil
        await deinitGate.wait()  // while the work is still suspended
        work.open()
        await taskEnded.wait()
        #expect(applied.count == 0)
    }

    @Test func failure_reachesApply() async {
        let deinitGate = Gate()
        let applied = Collected<Int>()
        let owner = PlainOwner(deinitGate: deinitGate)
        runTask(weak: owner, in: owner.bag) { () async throws -> Int in
            throw TestError(code: 3)
        } then: { _, result in
            if case .failure(let error as TestError) = result { applied.append(error.code) }
        }
        await applied.wait(count: 1)
        #expect(applied.values == [3])
    }
}
