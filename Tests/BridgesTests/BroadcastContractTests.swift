import Dispatch
import TestSupport
import Testing

@testable import Bridges

/// Broadcast as a fan-out over the engine: decides under its lock and acts after it, keeps one
/// delivery order, honours waiting policies, and can fail.
@Suite("Broadcast: contract", .timeLimit(.minutes(3)))
struct BroadcastContractTests {
    // MARK: - Where it runs

    /// `await send` runs in the caller's isolation, as a sink's `send` does: a producer actor's
    /// sends drop elements (and call `onDrop`) on that actor, with no hop off it.
    @Test func actorProducer_awaitSend_runsOnTheProducersActor() async {
        weak var weakEvents: Broadcast<Int>?
        weak var weakProducer: QueueProducer?
        do {
            let events = Broadcast<Int>(replay: 1)
            weakEvents = events
            events.yield(0)  // replayed: the first next() returns it, and then nobody waits
            let dropsOnActor = Collected<Bool>()
            var iterator = events.stream(
                buffering: .dropNewest(1), onDrop: { _ in dropsOnActor.append(QueueExecutor.isCurrent) }
            ).makeAsyncIterator()
            #expect(await iterator.next() == 0)
            let producer = QueueProducer()
            weakProducer = producer
            #expect(await producer.send(events, [1, 2, 3]) == [true, true, true])
            #expect(dropsOnActor.values == [true, true], "2 and 3 dropped on the producer's actor (1 was kept)")
            events.finish()
            #expect(await iterator.next() == 1)
            #expect(await iterator.next() == nil)
        }
        #expect(weakEvents == nil, "the broadcast is released")
        #expect(weakProducer == nil, "the producer is released")
    }

    /// The same after waiting for room: a producer actor that awaits a `.suspending(1)`
    /// subscriber's room is resumed on its actor, and delivers there (the lossy subscriber's
    /// `onDrop`), for every element.
    @Test func actorProducer_awaitSendThatWaitsForRoom_deliversOnTheProducersActor() async {
        weak var weakEvents: Broadcast<Int>?
        do {
            let events = Broadcast<Int>(replay: 1)
            weakEvents = events
            events.yield(0)  // replayed to both: then the lossy one never waits again
            let dropsOnActor = Collected<Bool>()
            var lossy = events.stream(
                buffering: .dropNewest(1), onDrop: { _ in dropsOnActor.append(QueueExecutor.isCurrent) }
            ).makeAsyncIterator()
            var waiting = events.stream(buffering: .suspending(1)).makeAsyncIterator()
            #expect(await lossy.next() == 0)
            #expect(await waiting.next() == 0)
            // Room for one: the producer sends 1, then waits for room before each later element,
            // which this task makes only by taking one.
            let producer = Task { await QueueProducer().send(events, 1...20) }
            var received: [Int] = []
            while received.count < 20, let value = await waiting.next() { received.append(value) }
            #expect(await producer.value == Array(repeating: true, count: 20))
            #expect(received == Array(1...20), "the waiting subscriber lost nothing")
            #expect(dropsOnActor.values == Array(repeating: true, count: 19), "2...20 dropped on the producer's actor")
            events.finish()
            #expect(await lossy.next() == 1)
            #expect(await lossy.next() == nil)
        }
        #expect(weakEvents == nil, "the broadcast is released")
    }

    // MARK: - Nothing under the lock

    /// With delivery under the lock, reading `subscriberCount` from `onDrop` deadlocked the sender.
    @Test
    func onDropCallingBackIntoItsBroadcast_doesNotDeadlock() async {
        let events = Broadcast<Int>(replay: 1)
        events.yield(0)  // replayed: the first next() returns it, and then nobody waits
        let countsSeen = Collected<Int>()
        let dropped = Collected<Int>()
        let stream = events.stream(
            buffering: .dropNewest(1),
            onDrop: { element in
                dropped.append(element)
                countsSeen.append(events.subscriberCount)  // reads the broadcast's state
                if element == 2 { events.yield(1_000) }  // and sends from inside delivery
            })
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == 0)
        for value in 1...5 { events.yield(value) }  // 1 is buffered, the rest dropped
        events.finish()
        #expect(await iterator.next() == 1)
        #expect(await iterator.next() == nil)
        #expect(
            dropped.values == [2, 1_000, 3, 4, 5],
            "the re-entrant send is delivered right after the element being delivered")
        #expect(countsSeen.values == [1, 1, 1, 1, 1])
    }

    // MARK: - Backpressure

    @Test(.timeLimit(.minutes(2)))
    func suspending2Subscriber_producerAwaitingSend_neverRunsMoreThanCapacityAhead() async {
        let events = Broadcast<Int>()
        let total = stressRounds(20_000)  // each send waits for the consumer: volume needs idle cores
        let capacity = 2
        let taken = Counter()
        let consumer = Task { () -> [Int] in
            var received: [Int] = []
            for await value in events.stream(buffering: .suspending(capacity)) {
                received.append(value)
                taken.increment()
            }
            return received
        }
        await events.waitForSubscribers(1)
        var worstLead = 0
        for value in 0..<total {
            _ = await events.send(value)
            // Past the time limit the task is cancelled and `send` no longer waits: stop measuring.
            if Task.isCancelled { break }
            worstLead = max(worstLead, value + 1 - taken.value)
        }
        events.finish()
        #expect(await consumer.value == Array(0..<total), "nothing lost, in order")
        // capacity buffered + one handed to the consumer and not yet counted by it.
        #expect(
            worstLead <= capacity + 1,
            "the producer ran \(worstLead) elements ahead of a .suspending(\(capacity)) subscriber")
    }

    /// The synchronous form: `send` answers `.stopProducing` when the slowest waiting subscriber
    /// is full, and the producer resumes through `onDemand` (with a DemandGate, structurally).
    @Test(.timeLimit(.minutes(2)))
    func synchronousSend_stopProducing_andOnDemand_resumeAPausableProducer() async {
        // Stops at the time limit: past it the test's task is cancelled, and rounds begun then would
        // only report their own cut-short waits.
        for round in 0..<200 where !Task.isCancelled {
            let events = Broadcast<Int>()
            let perRound = 16
            let consumer = Task { () -> [Int] in
                var received: [Int] = []
                for await value in events.stream(buffering: .suspending(1)) { received.append(value) }
                return received
            }
            await events.waitForSubscribers(1)
            let producer = QueuePausableSource(count: perRound, events: events)
            let gate = DemandGate(pause: { producer.pause() }, resume: { producer.resume() })
            producer.gate = gate
            events.onDemand { gate.add($0) }
            producer.resume()
            let received = await consumer.value
            #expect(received == Array(0..<perRound), "round \(round)")
            gate.stop()
        }
    }

    @Test func sendReportsStopProducing_onlyWhileAWaitingSubscriberIsFull_andDemandComesFromItsRoom() async {
        let events = Broadcast<Int>(replay: 1)
        events.yield(0)  // kept for replay: the first next() below returns it without suspending
        let lossy = Task { await events.stream(buffering: .latest).reduce(into: [Int]()) { $0.append($1) } }
        await events.waitForSubscribers(1)
        #expect(events.yield(0) == .enqueued, "a lossy subscriber never holds the producer back")
        var iterator = events.stream(buffering: .suspending(2)).makeAsyncIterator()
        #expect(await iterator.next() == 0, "the replay")
        let demand = Collected<Int>()
        events.onDemand { demand.append($0) }
        #expect(demand.values == [2], "room for two")
        #expect(events.yield(1) == .enqueued)
        #expect(events.yield(2) == .stopProducing, "full")
        #expect(events.yield(3) == .stopProducing, "beyond: still delivered, nothing lost")
        #expect(await iterator.next() == 1)
        #expect(demand.values == [2], "no room yet (2 and 3 buffered): no demand")
        #expect(await iterator.next() == 2)
        #expect(demand.values == [2, 1])
        #expect(await iterator.next() == 3)
        #expect(demand.values == [2, 1, 1])
        #expect(events.yield(4) == .enqueued)
        events.finish()
        #expect(await iterator.next() == 4)
        #expect(await iterator.next() == nil)
        _ = await lossy.value
    }

    /// A producer that heard `Int.max` while nobody held it back, then was told to stop by a
    /// waiting subscriber that joined, hears again when that subscriber makes room: the demand
    /// reported before the stop does not count as reported room.
    @Test func producerToldToStopAfterUnlimitedDemand_hearsTheRoomAWaitingSubscriberMakes() async {
        let events = Broadcast<Int>()
        let demand = Collected<Int>()
        events.onDemand { demand.append($0) }
        #expect(demand.values == [Int.max], "nobody holds it back")
        let taken = Gate()
        let consumer = Task { () -> [Int] in
            var received: [Int] = []
            for await value in events.stream(buffering: .suspending(1)) {
                received.append(value)
                taken.open()
            }
            return received
        }
        await events.waitForSubscribers(1)
        #expect(events.yield(1) == .stopProducing, "the subscriber's one slot is used")
        await taken.wait()
        await demand.wait(count: 2)  // hangs (the suite's time limit fails it) if the room is not reported
        #expect(demand.values == [Int.max, 1])
        events.finish()
        #expect(await consumer.value == [1])
    }

    /// An element handed straight to a consumer waiting in `next()` leaves its buffer as empty as
    /// before: the yield itself reports that room to the producer, instead of leaving the
    /// producer held back until the consumer's task has been scheduled (it is not, here: its
    /// actor's queue is suspended).
    @Test func yieldToAWaitingConsumer_reportsItsRoomBeforeReturning() async throws {
        let events = Broadcast<Int>()
        let consumer = QueueConsumer()
        let received = Task { await consumer.drain(events.stream(buffering: .suspending(1))) }
        await events.waitForSubscribers(1)
        let sink = try #require(events.state.withLock { $0.subscribers.first?.sink })
        while !sink.token.storage.state.withLock({ $0.consumer != nil }) { await Task.yield() }
        let demand = Collected<Int>()
        events.onDemand { demand.append($0) }
        #expect(demand.values == [1], "the waiting consumer's one slot")
        consumer.executor.queue.suspend()  // the consumer cannot run until resumed below
        events.yield(1)
        #expect(demand.values == [1, 1], "the room was reported by the yield, before the consumer ran")
        consumer.executor.queue.resume()
        events.finish()
        #expect(await received.value == [1])
    }

    @Test
    func leavingWaitingSubscriber_releasesAWaitingProducer() async {
        let events = Broadcast<Int>()
        let stalled = Signal()
        let consumer = Task {
            for await _ in events.stream(buffering: .rendezvous) { await stalled.wait() }
        }
        await events.waitForSubscribers(1)
        let producer = Task {
            var results: [Broadcast<Int>.YieldResult] = []
            for value in 0..<5 { results.append(await events.send(value)) }
            return results
        }
        consumer.cancel()  // the only waiting subscriber leaves: nobody holds the producer back
        stalled.open()
        let results = await producer.value
        #expect(results.count == 5)
        events.finish()
        await consumer.value
    }

    // MARK: - Failure

    @Test func throwingBroadcast_failsItsConsumersAfterWhatTheyBuffered_andLateSubscribers() async {
        let events = ThrowingBroadcast<Int, TestError>(replay: 1)
        let consumer = Task { () -> ([Int], TestError?) in
            var received: [Int] = []
            do {
                for try await value in events.stream() { received.append(value) }
            } catch {
                return (received, error as? TestError)
            }
            return (received, nil)
        }
        await events.waitForSubscribers(1)
        events.yield(1)
        events.yield(2)
        events.finish(throwing: TestError(code: 4))
        let (received, failure) = await consumer.value
        #expect(received == [1, 2])
        #expect(failure == TestError(code: 4))
        var late: [Int] = []
        do {
            for try await value in events.stream() { late.append(value) }
            Issue.record("a late subscriber must get the failure")
        } catch {
            #expect(error == TestError(code: 4))
        }
        #expect(late == [2], "the replay, then the failure")
    }

    // MARK: - One order

    @Test func sendsFromFourThreads_everyConsumerSeesTheSameOrder() async {
        for _ in 0..<20 {
            let events = Broadcast<Int>()
            let consumers = (0..<3).map { index in
                Task { () -> [Int] in
                    let policy: BufferingPolicy = index == 2 ? .suspending(4) : .unbounded
                    return await events.stream(buffering: policy).reduce(into: [Int]()) { $0.append($1) }
                }
            }
            await events.waitForSubscribers(3)
            await withTaskGroup(of: Void.self) { group in
                for thread in 0..<4 {
                    group.addTask {
                        for i in 0..<500 { events.yield(thread * 1_000 + i) }
                    }
                }
            }
            events.finish()
            let first = await consumers[0].value
            #expect(first.count == 2_000)
            for consumer in consumers.dropFirst() {
                #expect(await consumer.value == first, "one delivery order for every consumer")
            }
        }
    }
}

/// A consumer whose jobs run on a queue the test can suspend, to hold it off while a producer
/// runs.
private actor QueueConsumer {
    let executor = QueueExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    func drain(_ stream: CallbackStream<Int, Never>) async -> [Int] {
        var received: [Int] = []
        for await value in stream { received.append(value) }
        return received
    }
}
