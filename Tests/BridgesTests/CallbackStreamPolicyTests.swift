import Bridges
import Dispatch
import Foundation
import TestSupport
import Testing

/// What each policy delivers, drops and reports, with a producer that yields 1…10 before the
/// consumer takes anything (the fastest producer, the slowest consumer), then finishes.
@Suite("CallbackStream: buffering policies", .timeLimit(.minutes(3)))
struct CallbackStreamPolicyTests {
    typealias Results = [CallbackStream<Int, Never>.YieldResult]

    struct Outcome {
        var results: Results = []
        var received: [Int] = []
        var dropped: [Int] = []
        var droppedCount = 0
    }

    /// Yields 1…10 synchronously inside the builder, finishes, then drains.
    func burst(_ policy: BufferingPolicy) async -> Outcome {
        let probe = StreamProbe()
        let dropped = Collected<Int>()
        let results = Collected<CallbackStream<Int, Never>.YieldResult>()
        let count = Collected<Int>()
        let stream = CallbackStream<Int, Never>.probed(probe, buffering: policy, onDrop: { dropped.append($0) }) {
            sink in
            for value in 1...10 { results.append(sink.yield(value)) }
            count.append(sink.droppedCount)
            sink.finish()
        }
        var received: [Int] = []
        for await value in stream { received.append(value) }
        await probe.tornDown.wait()
        await probe.proxyReleased.wait()
        #expect(probe.builds.value == 1)
        #expect(probe.teardowns.value == 1)
        return Outcome(
            results: results.values, received: received, dropped: dropped.values, droppedCount: count.values.first ?? -1
        )
    }

    @Test func unbounded_keepsEverything() async {
        let outcome = await burst(.unbounded)
        #expect(outcome.results == Array(repeating: .enqueued, count: 10))
        #expect(outcome.received == Array(1...10))
        #expect(outcome.dropped.isEmpty)
        #expect(outcome.droppedCount == 0)
    }

    @Test func latest_keepsNewest_reportsEachReplacedElement() async {
        let outcome = await burst(.latest)
        #expect(outcome.results == [.enqueued] + (1...9).map { .dropped($0) })
        #expect(outcome.received == [10])
        #expect(outcome.dropped == Array(1...9))
        #expect(outcome.droppedCount == 9)
    }

    @Test func drop_withoutWaitingConsumer_dropsEverything() async {
        let outcome = await burst(.drop)
        #expect(outcome.results == (1...10).map { .dropped($0) })
        #expect(outcome.received == [])
        #expect(outcome.dropped == Array(1...10))
        #expect(outcome.droppedCount == 10)
    }

    @Test func rendezvous_synchronousYieldLosesNothing_andSaysStop() async {
        let outcome = await burst(.rendezvous)
        #expect(outcome.results == Array(repeating: .stopProducing, count: 10))
        #expect(outcome.received == Array(1...10))
        #expect(outcome.dropped.isEmpty)
    }

    @Test func dropNewest3_keepsFirstThree() async {
        let outcome = await burst(.dropNewest(3))
        #expect(outcome.results == Array(repeating: .enqueued, count: 3) + (4...10).map { .dropped($0) })
        #expect(outcome.received == [1, 2, 3])
        #expect(outcome.dropped == Array(4...10))
        #expect(outcome.droppedCount == 7)
    }

    @Test func dropOldest3_keepsLastThree() async {
        let outcome = await burst(.dropOldest(3))
        #expect(outcome.results == Array(repeating: .enqueued, count: 3) + (1...7).map { .dropped($0) })
        #expect(outcome.received == [8, 9, 10])
        #expect(outcome.dropped == Array(1...7))
        #expect(outcome.droppedCount == 7)
    }

    @Test func suspending3_enqueuesAll_saysStopFromTheThird() async {
        let outcome = await burst(.suspending(3))
        #expect(outcome.results == [.enqueued, .enqueued] + Array(repeating: .stopProducing, count: 8))
        #expect(outcome.received == Array(1...10))
        #expect(outcome.dropped.isEmpty)
    }

    // MARK: - Consumer waiting

    @Test(arguments: [BufferingPolicy.drop, .latest, .rendezvous, .unbounded, .dropNewest(2), .suspending(2)])
    func yield_whenConsumerWaiting_handsElementOver(_ policy: BufferingPolicy) async {
        // Under .rendezvous the demand handler says when the consumer is suspended in next().
        // For the other policies a producer thread yields until the consumer has one element:
        // every attempt is either delivered or reported dropped, never both, never lost.
        let probe = StreamProbe()
        let box = SinkBox<Int, Never>()
        let dropped = Collected<Int>()
        let stream = CallbackStream<Int, Never>.probed(
            probe, box: box, buffering: policy, onDrop: { dropped.append($0) })
        let consumer = Task {
            var received: [Int] = []
            for await value in stream { received.append(value) }
            return received
        }
        await box.ready.wait()
        let sink = box.sink
        let results = Collected<CallbackStream<Int, Never>.YieldResult>()
        if policy == .rendezvous {
            let waiting = Signal()
            sink.onDemand { _ in waiting.open() }
            await waiting.wait()
            results.append(sink.yield(1))
            #expect(results.values == [.stopProducing])
        } else {
            // On a real thread: a task spinning here could hold a cooperative thread the consumer needs.
            let done = Signal()
            Thread.detachNewThread {
                var next = 1
                while true {
                    let result = sink.yield(next)
                    results.append(result)
                    next += 1
                    if result == .enqueued { break }
                }
                done.open()
            }
            await done.wait()
        }
        sink.finish()
        box.clear()
        let received = await consumer.value
        await probe.proxyReleased.wait()
        let attempts = results.count
        #expect(received.count + dropped.count == attempts, "every element delivered or reported dropped")
        #expect(Set(received).isDisjoint(with: dropped.values))
        #expect(received.last == attempts)
        #expect(probe.teardowns.value == 1)
    }

    // MARK: - Demand

    @Test func suspending_demand_startsAtCapacity_andGrowsByOnePerTake() async {
        let box = SinkBox<Int, Never>()
        let demand = Collected<Int>()
        let probe = StreamProbe()
        let stream = CallbackStream<Int, Never>.probed(probe, box: box, buffering: .suspending(2)) { sink in
            sink.onDemand { demand.append($0) }
            #expect(sink.yield(1) == .enqueued)
            #expect(sink.yield(2) == .stopProducing)
        }
        var iterator = stream.makeAsyncIterator()
        #expect(demand.values == [], "the builder runs on the first next()")
        #expect(await iterator.next() == 1)  // runs the builder (demand 2), then takes 1 (+1)
        #expect(demand.values == [2, 1])
        #expect(await iterator.next() == 2)
        #expect(demand.values == [2, 1, 1])
        box.sink.finish()
        #expect(await iterator.next() == nil)
        #expect(demand.values == [2, 1, 1])
        box.clear()
        _ = consume iterator
        await probe.proxyReleased.wait()
    }

    @Test func rendezvous_demand_isOnePerNextWithNothingBuffered() async {
        let box = SinkBox<Int, Never>()
        let demanded = Collected<Int>()
        let asked = Signal()
        let probe = StreamProbe()
        let stream = CallbackStream<Int, Never>.probed(probe, box: box, buffering: .rendezvous) { sink in
            sink.onDemand {
                demanded.append($0)
                asked.open()
            }
            _ = sink.yield(1)  // buffered: the first next() takes it without asking
        }
        let consumer = Task {
            var received: [Int] = []
            for await value in stream { received.append(value) }
            return received
        }
        await asked.wait()  // the consumer took 1 and now waits for the next element
        #expect(demanded.values == [1])
        #expect(box.sink.yield(2) == .stopProducing)
        box.sink.finish()
        box.clear()
        #expect(await consumer.value == [1, 2])
        #expect(demanded.values.allSatisfy { $0 == 1 })
        await probe.proxyReleased.wait()
    }

    @Test func lossyAndUnbounded_demand_isUnlimitedOnce() async {
        for policy in [BufferingPolicy.unbounded, .latest, .drop, .dropOldest(4), .dropNewest(4)] {
            let demand = Collected<Int>()
            let probe = StreamProbe()
            let stream = CallbackStream<Int, Never>.probed(probe, buffering: policy) { sink in
                sink.onDemand { demand.append($0) }
                _ = sink.yield(1)
                sink.finish()
            }
            for await _ in stream {}
            #expect(demand.values == [Int.max], "\(policy)")
            await probe.proxyReleased.wait()
        }
    }

    // MARK: - send

    @Test func rendezvous_send_returnsOnlyWhenConsumerTookTheElement() async {
        let box = SinkBox<Int, Never>()
        let probe = StreamProbe()
        let stream = CallbackStream<Int, Never>.probed(probe, box: box, buffering: .rendezvous)
        let returned = Collected<Int>()
        let sendingTwo = Signal()
        let gate = Signal()
        let consumer = Task {
            var received: [Int] = []
            for await value in stream {
                received.append(value)
                if value == 1 {
                    await gate.wait()
                    // The consumer has not asked for 2 yet, so send(2) cannot have returned.
                    #expect(!returned.values.contains(2))
                }
            }
            return received
        }
        await box.ready.wait()
        let sink = box.sink
        let producer = Task {
            for value in 1...3 {
                if value == 2 { sendingTwo.open() }
                #expect(await sink.send(value) == .enqueued)
                returned.append(value)
            }
            sink.finish()
        }
        await sendingTwo.wait()
        gate.open()
        await producer.value
        #expect(await consumer.value == [1, 2, 3])
        #expect(returned.values == [1, 2, 3])
        box.clear()
        await probe.proxyReleased.wait()
    }

    @Test func suspending_send_waitsOnlyWhenFull() async {
        let box = SinkBox<Int, Never>()
        let probe = StreamProbe()
        let stream = CallbackStream<Int, Never>.probed(probe, box: box, buffering: .suspending(2))
        let sent = Collected<Int>()
        let producerStarted = Signal()
        let consumer = Task { () -> [Int] in
            var all: [Int] = []
            for await value in stream { all.append(value) }
            return all
        }
        await box.ready.wait()
        let sink = box.sink
        let producer = Task {
            producerStarted.open()
            for value in 1...50 {
                #expect(await sink.send(value) == .enqueued)
                sent.append(value)
            }
            sink.finish()
        }
        await producerStarted.wait()
        #expect(await consumer.value == Array(1...50))
        await producer.value
        #expect(sent.values == Array(1...50))
        box.clear()
        await probe.proxyReleased.wait()
    }

    @Test func lossy_send_neverWaits() async {
        let box = SinkBox<Int, Never>()
        let probe = StreamProbe()
        // The builder yields a first element so the first next() does not suspend.
        let stream = CallbackStream<Int, Never>.probed(probe, box: box, buffering: .latest) { sink in
            _ = sink.yield(0)
        }
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == 0)
        #expect(await box.sink.send(1) == .enqueued)
        #expect(await box.sink.send(2) == .dropped(1))
        #expect(await iterator.next() == 2)
        box.sink.finish()
        #expect(await iterator.next() == nil)
        box.clear()
        _ = consume iterator
        await probe.proxyReleased.wait()
    }

    // MARK: - Pausable source

    /// A source that pauses when told `.stopProducing` and resumes when `onDemand` grants more,
    /// like FileHandle or URLSessionTask.suspend()/resume().
    final class PausableSource: Sendable {
        private let state = LockedState((next: 1, credit: 0))
        let total: Int
        let results = Collected<(value: Int, result: CallbackStream<Int, Never>.YieldResult, creditAfter: Int)>()
        init(total: Int) { self.total = total }

        func grant(_ n: Int, _ sink: CallbackStream<Int, Never>.Sink) {
            state.withLock { $0.credit = n == Int.max ? Int.max : $0.credit + n }
            while true {
                let value: Int? = state.withLock { [total] state in
                    guard state.credit > 0, state.next <= total else { return nil }
                    state.credit -= 1
                    state.next += 1
                    return state.next - 1
                }
                guard let value else { break }
                let result = sink.yield(value)
                results.append((value, result, state.withLock { $0.credit }))
                if value == total { sink.finish() }
            }
        }
    }

    @Test(arguments: [1, 3, 8])
    func suspending_pausableSource_stopsExactlyWhenItsCreditRunsOut(_ capacity: Int) async {
        let source = PausableSource(total: 100)
        let probe = StreamProbe()
        let stream = CallbackStream<Int, Never>.probed(probe, buffering: .suspending(capacity)) { sink in
            sink.onDemand { n in source.grant(n, sink) }
        }
        var received: [Int] = []
        for await value in stream { received.append(value) }
        #expect(received == Array(1...100))
        for entry in source.results.values {
            // The stream says "stop" exactly when the buffer is full, which is exactly when the
            // source has used up the demand it was granted.
            #expect((entry.result == .stopProducing) == (entry.creditAfter == 0), "value \(entry.value)")
            #expect(entry.result != .terminated)
        }
        await probe.proxyReleased.wait()
    }

    @Test func rendezvous_pausableSource_producesOneElementPerRequest() async {
        let source = PausableSource(total: 50)
        let probe = StreamProbe()
        let stream = CallbackStream<Int, Never>.probed(probe, buffering: .rendezvous) { sink in
            sink.onDemand { n in source.grant(n, sink) }
        }
        var received: [Int] = []
        for await value in stream { received.append(value) }
        #expect(received == Array(1...50))
        #expect(source.results.values.allSatisfy { $0.result == .stopProducing && $0.creditAfter == 0 })
        await probe.proxyReleased.wait()
    }
}
