import TestSupport
import Testing

@testable import Bridges

@Suite("forEach(weak:in:)", .timeLimit(.minutes(3)))
struct WeakOwnerForEachTests {
    @MainActor
    @Test func viewModel_onEndlessStream_isReleased_taskEnds_sourceTornDown() async {
        let source = TrackedStream([Int].self)
        let updates = Collected<[Int]>()
        let deinitGate = Gate()
        let taskEnded = Gate()
        var model: ItemsViewModel? = ItemsViewModel(updates: updates, deinitGate: deinitGate)
        weak var weakModel: AnyObject?
        weakModel = model
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
        let started = Gate()
        let tornDown = Gate()
        let sinkBox = LockedState<CallbackStream<[Int], Never>.Sink?>(nil)
        let stream = CallbackStream<[Int], Never>(buffering: .latest) { sink in
            sinkBox.withLock { $0 = sink }
            started.open()
            return Cancellation { tornDown.open() }
        }
        let updates = Collected<[Int]>()
        let deinitGate = Gate()
        let taskEnded = Gate()
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
        let updates = Collected<Int>()
        let deinitGate = Gate()
        let taskEnded = Gate()
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
        let deinitGate = Gate()
        let taskEnded = Gate()
        let calls = Collected<Int>()
        var owner: PlainOwner? = PlainOwner(deinitGate: deinitGate)
        source.stream.forEach(weak: owner!, in: owner!.bag) { [probe = DeinitSignal(taskEnded)] _, value in
            _ = probe
            calls.append(value)
        }
        owner = nil  // the loop is suspended in next(): only the bag can end it
        await deinitGate.wait()
        await source.tornDown.wait()
        await taskEnded.wait()
        #expect(calls.count == 0)
    }

    @Test func ownerReleased_whileHandlerSuspended_handlerFinishes_thenOwnerGoes_noFurtherElement() async {
        let source = TrackedStream(Int.self)
        let deinitGate = Gate()
        let taskEnded = Gate()
        let entered = Collected<Int>()
        let finished = Collected<Int>()
        let proceed = Gate()
        var owner: PlainOwner? = PlainOwner(deinitGate: deinitGate)
        weak var weakOwner: AnyObject?
        weakOwner = owner
        source.stream.forEach(weak: owner!, in: owner!.bag) { [probe = DeinitSignal(taskEnded)] _, value in
            _ = probe
            entered.append(value)
            await proceed.wait()
            finished.append(value)
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
        let deinitGate = Gate()
        let taskEnded = Gate()
        let calls = Collected<Int>()
        var owner: PlainOwner? = PlainOwner(deinitGate: deinitGate)
        source.stream.forEach(weak: owner!, in: owner!.bag) { [probe = DeinitSignal(taskEnded)] _, value in
            _ = probe
            calls.append(value)
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
        let deinitGate = Gate()
        let taskEnded = Gate()
        let calls = Collected<Int>()
        var owner: PlainOwner? = PlainOwner(deinitGate: deinitGate)
        source.stream.forEach(weak: owner!, in: owner!.bag) { [probe = DeinitSignal(taskEnded)] _, value in
            _ = probe
            calls.append(value)
        }
        source.continuation.yield(1)
        source.continuation.finish()
        await taskEnded.wait()
        #expect(calls.values == [1])
        #expect(owner!.bag.isEmpty, "a finished loop cancels its own token so the bag can drop it")
        owner = nil
        await deinitGate.wait()
    }

    // MARK: - onFailure

    /// A view model hears its feed's failure once, on the main actor, after the last element,
    /// and still goes when its screen does.
    @MainActor
    @Test func onFailure_whenSequenceThrows_calledOnce_inHandlersIsolation_afterElements() async {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Int.self)
        let tornDown = Gate()
        continuation.onTermination = { _ in tornDown.open() }
        let deinitGate = Gate()
        let taskEnded = Gate()
        let events = Collected<String>()
        var model: FeedViewModel? = FeedViewModel(deinitGate: deinitGate)
        weak var weakModel: FeedViewModel?
        weakModel = model
        model!.bind(to: stream, events: events, probe: DeinitSignal(taskEnded))

        continuation.yield(1)
        continuation.finish(throwing: TestError(code: 7))
        await events.wait(count: 2)
        await taskEnded.wait()
        await tornDown.wait()
        #expect(events.values == ["element 1 main:true", "failure 7 main:true"])
        #expect(model!.failure == TestError(code: 7))
        #expect(model!.bag.isEmpty)

        model = nil
        await deinitGate.wait()
        #expect(weakModel == nil)
    }

    @Test func onFailure_whenSequenceFinishes_orThrowsCancellationError_isNotCalled() async {
        for ending in ["finish", "cancellationError"] {
            let (stream, continuation) = AsyncThrowingStream.makeStream(of: Int.self)
            let deinitGate = Gate()
            let taskEnded = Gate()
            let events = Collected<String>()
            var owner: PlainOwner? = PlainOwner(deinitGate: deinitGate)
            stream.forEach(weak: owner!, in: owner!.bag) { [probe = DeinitSignal(taskEnded)] _, value in
                _ = probe
                events.append("element \(value)")
            } onFailure: { _, error in
                events.append("failure \(error)")
            }
            continuation.yield(1)
            if ending == "finish" {
                continuation.finish()
            } else {
                continuation.finish(throwing: CancellationError())
            }
            await taskEnded.wait()
            #expect(events.values == ["element 1"], "\(ending)")
            #expect(owner!.bag.isEmpty)
            owner = nil
            await deinitGate.wait()
        }
    }

    /// `cancel()` is final for `onFailure` too: a failure after the bag was cancelled is not
    /// reported, and the loop ends at the cancel.
    @Test func onFailure_afterCancelAll_isNotCalled() async {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Int.self)
        let tornDown = Gate()
        continuation.onTermination = { _ in tornDown.open() }
        let deinitGate = Gate()
        let taskEnded = Gate()
        let events = Collected<String>()
        var owner: PlainOwner? = PlainOwner(deinitGate: deinitGate)
        stream.forEach(weak: owner!, in: owner!.bag) { [probe = DeinitSignal(taskEnded)] _, value in
            _ = probe
            events.append("element \(value)")
        } onFailure: { _, error in
            events.append("failure \(error)")
        }
        continuation.yield(1)
        await events.wait(count: 1)
        owner!.bag.cancelAll()
        continuation.finish(throwing: TestError(code: 1))
        await tornDown.wait()
        await taskEnded.wait()
        #expect(events.values == ["element 1"])
        owner = nil
        await deinitGate.wait()
    }
}

/// A view model that shows its feed's failure: the `onFailure:` shape README users write.
@MainActor
private final class FeedViewModel {
    var values: [Int] = []
    var failure: TestError?
    let bag = CancellationBag()
    private let deinitGate: Gate

    init(deinitGate: Gate) { self.deinitGate = deinitGate }

    func bind(to feed: AsyncThrowingStream<Int, any Error>, events: Collected<String>, probe: DeinitSignal) {
        feed.forEach(weak: self, in: bag) { [probe] owner, value in
            _ = probe
            owner.values.append(value)
            events.append("element \(value) main:\(isOnMainActor())")
        } onFailure: { owner, error in
            owner.failure = error as? TestError
            events.append("failure \((error as? TestError)?.code ?? -1) main:\(isOnMainActor())")
        }
    }

    deinit { deinitGate.open() }
}
