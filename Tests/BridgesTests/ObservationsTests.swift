#if canImport(Observation)
import Bridges
import BridgesTesting
import Observation
import Testing

/// A `@MainActor` view model, as SwiftUI code writes them.
@available(BridgesObservation, *)
@MainActor @Observable final class SearchFieldModel {
    var query = ""
    var isEditing = false
    var untracked = 0
}

/// A model isolated to another global actor: reads must happen there.
@globalActor actor ModelActor {
    static let shared = ModelActor()
}

@available(BridgesObservation, *)
@ModelActor @Observable final class CounterModel {
    var value = 0
}

/// `observations(of:)` against real `@Observable` classes, on Linux too.
@Suite(.timeLimit(.minutes(3))) struct ObservationsTests {
    // MARK: - Values

    @available(BridgesObservation, *)
    @Test @MainActor func currentValueFirst_thenOneValuePerTransaction() async {
        weak var released: SearchFieldModel?
        do {
            let model = SearchFieldModel()
            released = model
            let (reads, readsContinuation) = AsyncStream.makeStream(of: String.self)
            var readsIterator = reads.makeAsyncIterator()
            let stream = observations(of: model, buffering: .unbounded) { model in
                MainActor.assertIsolated()  // read on the model's isolation
                readsContinuation.yield(model.query)
                return model.query
            }
            var iterator = stream.makeAsyncIterator()
            #expect(await iterator.next() == "")  // the current value, first
            #expect(await readsIterator.next() == "")

            model.query = "a"  // one transaction: two changes
            model.query = "ab"
            #expect(await readsIterator.next() == "ab")  // one read, after the transaction
            model.query = "abc"
            #expect(await readsIterator.next() == "abc")
            #expect(await iterator.next() == "ab")
            #expect(await iterator.next() == "abc")  // "a" was never a value
        }
        #expect(released == nil)
    }

    @available(BridgesObservation, *)
    @Test @MainActor func unbounded_slowConsumer_losesNothing() async {
        weak var released: SearchFieldModel?
        do {
            let model = SearchFieldModel()
            released = model
            let (reads, readsContinuation) = AsyncStream.makeStream(of: String.self)
            var readsIterator = reads.makeAsyncIterator()
            let stream = observations(of: model, buffering: .unbounded) { model in
                readsContinuation.yield(model.query)
                return model.query
            }
            var iterator = stream.makeAsyncIterator()
            #expect(await iterator.next() == "")
            _ = await readsIterator.next()
            for index in 1...500 {  // 500 transactions, nothing taken
                model.query = "\(index)"
                _ = await readsIterator.next()
            }
            for index in 1...500 {
                #expect(await iterator.next() == "\(index)")
            }
        }
        #expect(released == nil)
    }

    @available(BridgesObservation, *)
    @Test @MainActor func latest_slowConsumer_getsTheNewestValue() async {
        weak var released: SearchFieldModel?
        do {
            let model = SearchFieldModel()
            released = model
            let (reads, readsContinuation) = AsyncStream.makeStream(of: String.self)
            var readsIterator = reads.makeAsyncIterator()
            let stream = observations(of: model) { model in  // .latest by default
                readsContinuation.yield(model.query)
                return model.query
            }
            var iterator = stream.makeAsyncIterator()
            #expect(await iterator.next() == "")
            _ = await readsIterator.next()
            for index in 1...50 {
                model.query = "\(index)"
                _ = await readsIterator.next()
            }
            #expect(await iterator.next() == "50")
        }
        #expect(released == nil)
    }

    @available(BridgesObservation, *)
    @Test @MainActor func onlyThePropertiesReadAreObserved() async {
        let model = SearchFieldModel()
        let (reads, readsContinuation) = AsyncStream.makeStream(of: Bool.self)
        var readsIterator = reads.makeAsyncIterator()
        var iterator = observations(of: model, buffering: .unbounded) { model in
            readsContinuation.yield(model.isEditing)
            return model.isEditing
        }.makeAsyncIterator()
        #expect(await iterator.next() == false)
        _ = await readsIterator.next()
        model.untracked = 1  // not read: no new value
        model.isEditing = true
        #expect(await readsIterator.next() == true)
        #expect(await iterator.next() == true)
    }

    @available(BridgesObservation, *)
    @Test @MainActor func cold_eachIteratorHasItsOwnTracking() async {
        let model = SearchFieldModel()
        let stream = observations(of: model, buffering: .unbounded) { $0.query }
        var first = stream.makeAsyncIterator()
        #expect(await first.next() == "")
        model.query = "x"
        #expect(await first.next() == "x")
        var second = stream.makeAsyncIterator()
        #expect(await second.next() == "x")  // starts with the current value
        model.query = "y"
        #expect(await first.next() == "y")
        #expect(await second.next() == "y")
    }

    @available(BridgesObservation, *)
    @Test @ModelActor func modelIsolatedToAnotherGlobalActor_isReadThere() async {
        weak var released: CounterModel?
        do {
            let model = CounterModel()
            released = model
            var iterator = observations(of: model, buffering: .unbounded) { model in
                ModelActor.shared.assertIsolated()  // the read runs on the model's actor
                return model.value
            }.makeAsyncIterator()
            #expect(await iterator.next() == 0)
            model.value = 1
            #expect(await iterator.next() == 1)
        }
        #expect(released == nil)
    }

    // MARK: - Lifetime

    @available(BridgesObservation, *)
    @Test @MainActor func modelDeallocated_streamFinishes() async {
        weak var released: SearchFieldModel?
        var model: SearchFieldModel? = SearchFieldModel()
        released = model
        var iterator = observations(of: model!) { $0.query }.makeAsyncIterator()
        #expect(await iterator.next() == "")
        model = nil  // the stream does not keep it alive
        #expect(released == nil)
        #expect(await iterator.next() == nil)  // and ends when it goes away
    }

    @available(BridgesObservation, *)
    @Test @MainActor func consumerLeaves_laterChangesDoNothing_andNoMisuseIsReported() async throws {
        let model = SearchFieldModel()
        try await withBridgesDiagnosticsAsFailures { () async throws in
            for round in 0..<200 {
                let stream = observations(of: model, buffering: .unbounded) { $0.query }
                var count = 0
                for await _ in stream {
                    count += 1
                    if count == 2 { break }  // teardown; tracking remains in the model
                    model.query = "\(round)"
                }
                model.query = "after \(round)"  // fires the old tracking: must do nothing
            }
        }
    }

    /// The consumer's task is cancelled from another thread while changes fire on the main actor:
    /// the stream ends, no misuse is reported, and neither the model nor the stream is kept alive.
    @available(BridgesObservation, *)
    @Test @MainActor func consumerCancelledWhileChangesFire_endsCleanly() async throws {
        try await withBridgesDiagnosticsAsFailures { () async throws in
            for round in 0..<200 {
                weak var released: SearchFieldModel?
                do {
                    let model = SearchFieldModel()
                    released = model
                    let stream = observations(of: model, buffering: .unbounded) { $0.query }
                    let started = Signal()
                    let consumer = Task.detached {
                        var count = 0
                        for await _ in stream {
                            count += 1
                            if count == 1 { started.open() }
                        }
                        return count
                    }
                    await started.wait()
                    let canceller = Task.detached { consumer.cancel() }
                    for index in 0..<(round % 10) {
                        model.query = "\(index)"
                        await Task.yield()  // lets reads interleave with the cancel (not a wait)
                    }
                    await canceller.value
                    let count = await consumer.value
                    #expect(count >= 1)
                }
                #expect(released == nil)
            }
        }
    }
}
#endif
