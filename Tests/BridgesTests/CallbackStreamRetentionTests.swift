import TestSupport
import Testing

@testable import Bridges

/// A started stream's state keeps one waiting element inline (no ring), the builder in the
/// teardown's payload, and the waiting policies' fields in an object of their own. These tests
/// check that nothing there is kept longer than it is needed, lost, or delivered out of order.
@Suite("CallbackStream: what the state holds, and for how long", .timeLimit(.minutes(3)))
struct CallbackStreamRetentionTests {
    /// The builder lives in the state until it runs (`.unstarted`), and not a moment longer:
    /// its captures go as soon as it has run, while the stream goes on.
    @Test func theBuilder_isReleasedOnceItHasRun_whileTheStreamGoesOn() async {
        let canary = Weak<Canary>()
        let box = SinkBox<Int, Never>()
        var iterator: CallbackStream<Int, Never>.AsyncIterator = {
            let captured = Canary()
            canary.object = captured
            return CallbackStream<Int, Never> { sink in
                withExtendedLifetime(captured) {}
                box.set(sink)
                sink.yield(1)
                return Cancellation {}
            }.makeAsyncIterator()
        }()
        #expect(canary.object != nil, "the iterator's state holds the builder until it runs")
        #expect(await iterator.next() == 1)
        #expect(canary.object == nil, "the state kept the builder after it ran")
        box.sink.yield(2)
        #expect(await iterator.next() == 2)
        box.sink.finish()
        box.clear()
        #expect(await iterator.next() == nil)
    }

    /// An iterator dropped before its first `next()` releases the builder without running it.
    @Test func theBuilder_ofAnIteratorDroppedBeforeNext_isReleasedUnrun() {
        let canary = Weak<Canary>()
        let runs = Counter()
        do {
            let captured = Canary()
            canary.object = captured
            let iterator = CallbackStream<Int, Never> { sink in
                withExtendedLifetime(captured) {}
                runs.increment()
                sink.finish()
                return Cancellation {}
            }.makeAsyncIterator()
            #expect(canary.object != nil)
            withExtendedLifetime(iterator) {}
        }
        #expect(canary.object == nil, "the builder outlived its iterator")
        #expect(runs.value == 0)
    }

    /// One element waiting alone sits in the inline slot; a consumer that leaves then reports it
    /// undelivered, exactly once, like a buffered element in the ring.
    @Test func oneElementInTheSlot_isReportedUndelivered_whenTheConsumerLeaves() async {
        let undelivered = Collected<String>()
        let box = SinkBox<Int, Never>()
        do {
            var iterator = CallbackStream<Int, Never>(onUndelivered: { element, reason in
                undelivered.append("\(element) \(reason)")
            }) { sink in
                box.set(sink)
                sink.yield(1)
                return Cancellation {}
            }.makeAsyncIterator()
            #expect(await iterator.next() == 1)
            #expect(box.sink.yield(2) == .enqueued)
            #expect(box.sink.token.storage.state.withLock { $0.buffer.hasFirst && $0.buffer.capacity == 0 })
            withExtendedLifetime(iterator) {}
        }
        #expect(undelivered.values == ["2 .cancelled"])
        #expect(box.sink.yield(3) == .terminated)
        box.clear()
    }

    /// An element left in the slot is released when the consumer leaves, whether or not the
    /// stream has an `onUndelivered` handler to hand it to first (the slot is part of the state,
    /// not of a ring object whose deinit would release it).
    @Test(arguments: [false, true])
    func anElementLeftInTheSlot_isReleased_whenTheConsumerLeaves(withHandler: Bool) async {
        let element = Weak<Canary>()
        let box = SinkBox<Canary, Never>()
        let handled = Counter()
        var handler: CallbackStream<Canary, Never>.UndeliveredHandler?
        if withHandler { handler = { _, _ in handled.increment() } }
        do {
            var iterator = CallbackStream<Canary, Never>(onUndelivered: handler) { sink in
                box.set(sink)
                sink.yield(Canary())
                return Cancellation {}
            }.makeAsyncIterator()
            _ = await iterator.next()
            let left = Canary()
            element.object = left
            guard case .enqueued = box.sink.yield(left) else {
                Issue.record("not enqueued")
                return
            }
            #expect(box.sink.token.storage.state.withLock { $0.buffer.hasFirst })
            withExtendedLifetime(iterator) {}
        }
        box.clear()
        #expect(element.object == nil, "the element in the slot outlived its stream")
        #expect(handled.value == (withHandler ? 1 : 0))
    }

    /// The slot, then the ring that replaces it, then a consumer that keeps up again: every
    /// element once and in order, through the public API.
    @Test func slotThenRingThenSlotAgain_deliversEverythingInOrder() async {
        let box = SinkBox<Int, Never>()
        var iterator = CallbackStream<Int, Never> { sink in
            box.set(sink)
            sink.yield(0)
            return Cancellation {}
        }.makeAsyncIterator()
        var received = [await iterator.next()]
        var next = 1
        for burst in [1, 2, 1, 5, 1, 1, 9, 1] {
            for _ in 0..<burst {
                box.sink.yield(next)
                next += 1
            }
            for _ in 0..<burst { received.append(await iterator.next()) }
        }
        box.sink.finish()
        box.clear()
        received.append(await iterator.next())
        #expect(received == (0..<next).map { Optional($0) } + [nil])
    }

    /// Under a policy that never asks for more than its first, unlimited demand, `onDemand`
    /// reports `Int.max` once and keeps nothing: the handler's captures go at once.
    @Test(arguments: [BufferingPolicy.unbounded, .latest, .dropNewest(2), .dropOldest(3)])
    func onDemand_underANonWaitingPolicy_reportsMaxOnce_andKeepsNoHandler(_ policy: BufferingPolicy) async {
        let reported = Collected<Int>()
        let canary = Weak<Canary>()
        let box = SinkBox<Int, Never>()
        var iterator = CallbackStream<Int, Never>(buffering: policy) { sink in
            onDemandRecording(sink, into: reported, canary: canary)
            box.set(sink)
            sink.yield(1)
            return Cancellation {}
        }.makeAsyncIterator()
        #expect(await iterator.next() == 1)
        #expect(reported.values == [Int.max])
        #expect(canary.object == nil, "the stream kept a demand handler it will never call")
        box.sink.finish()
        box.clear()
        #expect(await iterator.next() == nil)
    }

    /// A waiting policy keeps its handler (it reports demand as room appears) until the end.
    @Test func onDemand_underAWaitingPolicy_keepsTheHandler_untilTheEnd() async {
        let reported = Collected<Int>()
        let canary = Weak<Canary>()
        let box = SinkBox<Int, Never>()
        var iterator = CallbackStream<Int, Never>(buffering: .suspending(2)) { sink in
            onDemandRecording(sink, into: reported, canary: canary)
            box.set(sink)
            #expect(reported.values == [2], "the room there is, reported at once")
            #expect(sink.yield(1) == .enqueued)
            return Cancellation {}
        }.makeAsyncIterator()
        #expect(await iterator.next() == 1)
        #expect(canary.object != nil, "a waiting policy's handler went before the end")
        box.sink.finish()
        box.clear()
        #expect(await iterator.next() == nil)
        #expect(canary.object == nil, "the handler outlived the stream's end")
    }

    /// Registers a demand handler that records each count and holds a fresh canary, so that a
    /// test can tell when the stream let go of it.
    private func onDemandRecording(
        _ sink: CallbackStream<Int, Never>.Sink, into reported: Collected<Int>, canary: Weak<Canary>
    ) {
        let captured = Canary()
        canary.object = captured
        sink.onDemand { count in
            withExtendedLifetime(captured) {}
            reported.append(count)
        }
    }
}
