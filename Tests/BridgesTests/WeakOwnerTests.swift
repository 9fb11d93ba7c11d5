@testable import Bridges
import Testing

/// A view model as users write them: `@MainActor`, its own bag, state set from a stream.
@MainActor
final class ItemsViewModel {
    var items: [Int] = []
    var updatesOnMainActor: [Bool] = []
    let bag = CancellationBag()
    private let updates: LifetimeRecorder<[Int]>
    private let deinitGate: LifetimeGate

    init(updates: LifetimeRecorder<[Int]>, deinitGate: LifetimeGate) {
        self.updates = updates
        self.deinitGate = deinitGate
    }

    /// `probe` is released when the loop's Task has ended (it lives in the handler's captures).
    func bind<S: AsyncSequence & Sendable>(to items: S, probe: DeinitSignal) where S.Element == [Int] {
        // The shape DESIGN.md and README promise, inside a @MainActor type, without warnings.
        items.forEach(weak: self, in: bag) { [probe] owner, items in
            _ = probe
            owner.items = items
            owner.updatesOnMainActor.append(isOnMainActor())
            owner.updates.record(items)
        }
    }

    deinit { deinitGate.open() }
}

/// A plain (non-actor) owner.
final class PlainOwner: Sendable {
    let bag = CancellationBag()
    private let deinitGate: LifetimeGate
    init(deinitGate: LifetimeGate) { self.deinitGate = deinitGate }
    deinit { deinitGate.open() }
}

/// An `actor` owner: its own isolation is the caller's, and a Task running there would hold it.
actor ActorOwner {
    private(set) var values: [Int] = []
    let bag = CancellationBag()
    private let deinitGate: LifetimeGate

    init(deinitGate: LifetimeGate) { self.deinitGate = deinitGate }

    func listen(to stream: AsyncStream<Int>, updates: LifetimeRecorder<Int>, probe: DeinitSignal) {
        stream.forEach(weak: self, in: bag) { [probe] owner, value in
            _ = probe
            await owner.append(value)
            updates.record(value)
        }
    }

    func load(work: LifetimeGate, applied: LifetimeRecorder<Int>, probe: DeinitSignal) {
        runTask(weak: self, in: bag) {
            await work.wait()
            return 5
        } then: { [probe] owner, result in
            _ = probe
            await owner.append((try? result.get()) ?? -1)
            applied.record((try? result.get()) ?? -1)
        }
    }

    func append(_ value: Int) { values.append(value) }

    deinit { deinitGate.open() }
}

@Suite("forEach(weak:in:)", .timeLimit(.minutes(1)))
struct WeakOwnerForEachTests {
    @MainActor
    @Test func viewModel_onEndlessStream_isReleased_taskEnds_sourceTornDown() async {
        let source = TrackedStream([Int].self)
        let updates = LifetimeRecorder<[Int]>()
        let deinitGate = LifetimeGate()
        let taskEnded = LifetimeGate()
        var model: ItemsViewModel? = ItemsViewModel(updates: updates, deinitGate: deinitGate)
        weak let weakModel = model
        model!.bind(to: source.stream, probe: DeinitSignal(taskEnded))

        source.continuation.yield([1])
        source.continuation.yield([1, 2])
        await updates.wait(count: 2)
        #expect(model!.items == [1, 2])
        #expect(model!.updatesOnMainActor == [true, true])

        model = nil  // the last strong reference: nothing else may keep the view model alive
        await deinitGate.wait()
        await source.tornDown.wait()
        await taskEnded.wait()
        #expect(weakModel == nil)
        #expect(source.continuation.yield([3]).isTerminated)
    }

    /// The same with the library's own `CallbackStream`: its teardown (the legacy source's
    /// "stop") runs when the view model goes, though no element is pending.
    @MainActor
    @Test func viewModel_onCallbackStream_teardownRunsWhenOwnerGoes() async {
        let started = LifetimeGate()
        let tornDown = LifetimeGate()
        let sinkBox = LockedState<CallbackStream<[Int], Never>.Sink?>(nil)
        let stream = CallbackStream<[Int], Never>(buffering: .latest) { sink in
            sinkBox.withLock { $0 = sink }
            started.open()
            return Cancellation { tornDown.open() }
        }
        let updates = LifetimeRecorder<[Int]>()
        let deinitGate = LifetimeGate()
        let taskEnded = LifetimeGate()
        var model: ItemsViewModel? = ItemsViewModel(updates: updates, deinitGate: deinitGate)
        model!.bind(to: stream, probe: DeinitSignal(taskEnded))
        await started.wait()
        let sink = sinkBox.withLock { $0 }!
        _ = sink.yield([7])
        await updates.wait(count: 1)
        #expect(model!.items == [7])
        #expect(model!.updatesOnMainActor == [true])

        model = nil
        await deinitGate.wait()
        await tornDown.wait()
        await taskEnded.wait()
        #expect(sink.isTerminated)
        sinkBox.withLock { $0 = nil }
    }

    @Test func actorOwner_isNotKeptAliveByRunningOnItsOwnIsolation() async {
        let source = TrackedStream(Int.self)
        let updates = LifetimeRecorder<Int>()
        let deinitGate = LifetimeGate()
        let taskEnded = LifetimeGate()
        var owner: ActorOwner? = ActorOwner(deinitGate: deinitGate)
        await owner!.listen(to: source.stream, updates: updates, probe: DeinitSignal(taskEnded))
        source.continuation.yield(1)
        await updates.wait(count: 1)
        #expect(await owner!.values == [1])
        owner = nil
        await deinitGate.wait()
        await source.tornDown.wait()
        await taskEnded.wait()
    }

    @Test func ownerReleased_whileNoElementEverArrives_endsTheLoop() async {
        let source = TrackedStream(Int.self)
        let deinitGate = LifetimeGate()
        let taskEnded = LifetimeGate()
        let calls = LifetimeRecorder<Int>()
        var owner: PlainOwner? = PlainOwner(deinitGate: deinitGate)
        source.stream.forEach(weak: owner!, in: owner!.bag) { [probe = DeinitSignal(taskEnded)] _, value in
            _ = probe
            calls.record(value)
        }
        owner = nil  // the loop is suspended in next(): only the bag can end it
        await deinitGate.wait()
        await source.tornDown.wait()
        await taskEnded.wait()
        #expect(calls.count == 0)
    }

    @Test func ownerReleased_whileHandlerSuspended_handlerFinishes_thenOwnerGoes_noFurtherElement() async {
        let source = TrackedStream(Int.self)
        let deinitGate = LifetimeGate()
        let taskEnded = LifetimeGate()
        let entered = LifetimeRecorder<Int>()
        let finished = LifetimeRecorder<Int>()
        let proceed = LifetimeGate()
        var owner: PlainOwner? = PlainOwner(deinitGate: deinitGate)
        weak let weakOwner = owner
        source.stream.forEach(weak: owner!, in: owner!.bag) { [probe = DeinitSignal(taskEnded)] _, value in
            _ = probe
            entered.record(value)
            await proceed.wait()
            finished.record(value)
        }
        source.continuation.yield(1)
        await entered.wait(count: 1)

        owner = nil
        #expect(weakOwner != nil, "the suspended handler borrows the owner until it returns")
        #expect(!deinitGate.isOpen)
        source.continuation.yield(2)  // buffered while the handler is suspended
        proceed.open()

        await deinitGate.wait()
        await source.tornDown.wait()
        await taskEnded.wait()
        #expect(entered.values == [1])
        #expect(finished.values == [1])
        #expect(weakOwner == nil)
    }

    @Test func cancelAll_stopsTheLoop_whileOwnerLives_andTokenLeavesTheBag() async {
        let source = TrackedStream(Int.self)
        let deinitGate = LifetimeGate()
        let taskEnded = LifetimeGate()
        let calls = LifetimeRecorder<Int>()
        var owner: PlainOwner? = PlainOwner(deinitGate: deinitGate)
        source.stream.forEach(weak: owner!, in: owner!.bag) { [probe = DeinitSignal(taskEnded)] _, value in
            _ = probe
            calls.record(value)
        }
        source.continuation.yield(1)
        await calls.wait(count: 1)
        #expect(owner!.bag.count == 1)
        owner!.bag.cancelAll()
        await source.tornDown.wait()
        await taskEnded.wait()
        #expect(calls.values == [1])
        #expect(owner!.bag.isEmpty)
        owner = nil
        await deinitGate.wait()
    }

    @Test func sequenceEnds_loopEnds_tokenNoLongerCountsInTheBag() async {
        let source = TrackedStream(Int.self)
        let deinitGate = LifetimeGate()
        let taskEnded = LifetimeGate()
        let calls = LifetimeRecorder<Int>()
        var owner: PlainOwner? = PlainOwner(deinitGate: deinitGate)
        source.stream.forEach(weak: owner!, in: owner!.bag) { [probe = DeinitSignal(taskEnded)] _, value in
            _ = probe
            calls.record(value)
        }
        source.continuation.yield(1)
        source.continuation.finish()
        await taskEnded.wait()
        #expect(calls.values == [1])
        #expect(owner!.bag.isEmpty, "a finished loop cancels its own token so the bag can drop it")
        owner = nil
        await deinitGate.wait()
    }
}

@Suite("runTask(weak:in:)", .timeLimit(.minutes(1)))
struct WeakOwnerRunTaskTests {
    @MainActor
    @Test func ownerAlive_applyReceivesTheResult_onTheMainActor() async {
        let updates = LifetimeRecorder<[Int]>()
        let deinitGate = LifetimeGate()
        var model: ItemsViewModel? = ItemsViewModel(updates: updates, deinitGate: deinitGate)
        let applied = LifetimeRecorder<Bool>()
        runTask(weak: model!, in: model!.bag) {
            [4, 5]
        } then: { owner, result in
            owner.items = (try? result.get()) ?? []
            applied.record(isOnMainActor())
        }
        await applied.wait(count: 1)
        #expect(applied.values == [true])
        #expect(model!.items == [4, 5])
        model = nil
        await deinitGate.wait()
    }

    @Test func ownerReleased_whileWorkSuspended_cancelsWork_neverApplies() async {
        let source = TrackedStream(Int.self)  // the "request": never answers, honours cancellation
        let deinitGate = LifetimeGate()
        let taskEnded = LifetimeGate()
        let applied = LifetimeRecorder<Int>()
        var owner: PlainOwner? = PlainOwner(deinitGate: deinitGate)
        runTask(weak: owner!, in: owner!.bag) { [source] in
            var iterator = source.stream.makeAsyncIterator()
            return await iterator.next() ?? -1
        } then: { [probe = DeinitSignal(taskEnded)] _, result in
            _ = probe
            applied.record((try? result.get()) ?? -2)
        }
        owner = nil
        await deinitGate.wait()
        await source.tornDown.wait()  // the work was cancelled by the owner's bag
        await taskEnded.wait()
        #expect(applied.count == 0)
    }

    @Test func cancelAll_beforeTheResult_neverApplies() async {
        let deinitGate = LifetimeGate()
        let taskEnded = LifetimeGate()
        let applied = LifetimeRecorder<Int>()
        let proceed = LifetimeGate()
        let owner = PlainOwner(deinitGate: deinitGate)
        runTask(weak: owner, in: owner.bag) {
            await proceed.wait()  // ignores cancellation, then returns a value
            return 1
        } then: { [probe = DeinitSignal(taskEnded)] _, result in
            _ = probe
            applied.record((try? result.get()) ?? -2)
        }
        owner.bag.cancelAll()
        proceed.open()
        await taskEnded.wait()
        #expect(applied.count == 0)
        #expect(owner.bag.isEmpty)
    }

    @Test func actorOwner_releasedDuringTheWork_isNotKeptAlive_neverApplies() async {
        let deinitGate = LifetimeGate()
        let taskEnded = LifetimeGate()
        let applied = LifetimeRecorder<Int>()
        let work = LifetimeGate()
        var owner: ActorOwner? = ActorOwner(deinitGate: deinitGate)
        await owner!.load(work: work, applied: applied, probe: DeinitSignal(taskEnded))
        owner = nil
        await deinitGate.wait()  // while the work is still suspended
        work.open()
        await taskEnded.wait()
        #expect(applied.count == 0)
    }

    @Test func failure_reachesApply() async {
        let deinitGate = LifetimeGate()
        let applied = LifetimeRecorder<Int>()
        let owner = PlainOwner(deinitGate: deinitGate)
        runTask(weak: owner, in: owner.bag) { () async throws -> Int in
            throw LifetimeTestError(code: 3)
        } then: { _, result in
            if case .failure(let error as LifetimeTestError) = result { applied.record(error.code) }
        }
        await applied.wait(count: 1)
        #expect(applied.values == [3])
    }
}
