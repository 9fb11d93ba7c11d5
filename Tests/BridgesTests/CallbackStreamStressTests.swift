import Bridges
import Dispatch
import TestSupport
import Testing

/// Producers on real threads, exact counts: nothing lost or duplicated unless cancelled, and
/// when cancelled every producer's delivered elements are a gap-free prefix of what it yielded.
@Suite("CallbackStream: stress", .timeLimit(.minutes(3)))
struct CallbackStreamStressTests {
    static let producers = 4
    static let perProducer = stressRounds(100_000)

    /// Runs `producers` threads that each yield `0..<perProducer` tagged with their index.
    static func fourProducers(
        _ policy: BufferingPolicy, probe: StreamProbe, yields: Counter? = nil
    ) -> CallbackStream<Int, Never> {
        CallbackStream<Int, Never>.probed(probe, buffering: policy) { sink in
            let producer = sink
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: producers) { p in
                    for i in 0..<perProducer {
                        if case .terminated = producer.yield(p * perProducer + i) { return }
                        yields?.increment()
                    }
                }
                producer.finish()
            }
        }
    }

    /// Checks that per producer the values arrive in order, without duplicates or gaps.
    static func checkPrefixes(_ received: [Int], complete: Bool) {
        var next = Array(repeating: 0, count: producers)
        for value in received {
            let p = value / perProducer
            #expect(value % perProducer == next[p], "producer \(p): out of order, duplicated or lost")
            if value % perProducer != next[p] { return }
            next[p] += 1
        }
        if complete { #expect(next == Array(repeating: perProducer, count: producers)) }
    }

    @Test(arguments: [BufferingPolicy.unbounded, .rendezvous])
    func fourThreadProducers_everyElementOnce(_ policy: BufferingPolicy) async {
        let probe = StreamProbe()
        var received: [Int] = []
        received.reserveCapacity(Self.producers * Self.perProducer)
        for await value in Self.fourProducers(policy, probe: probe) { received.append(value) }
        #expect(received.count == Self.producers * Self.perProducer)
        Self.checkPrefixes(received, complete: true)
        await probe.proxyReleased.wait()
        #expect(probe.teardowns.value == 1)
    }

    @Test(arguments: [BufferingPolicy.unbounded, .rendezvous])
    func fourThreadProducers_withConcurrentCancellation_prefixesOnly_teardownOnce(_ policy: BufferingPolicy) async {
        for round in 0..<3 {
            let probe = StreamProbe()
            let halfway = Signal()
            let stream = Self.fourProducers(policy, probe: probe)
            let consumer = Task {
                var received: [Int] = []
                for await value in stream {
                    received.append(value)
                    if received.count == 1_000 * (round + 1) { halfway.open() }
                }
                return received
            }
            await halfway.wait()
            DispatchQueue.global().async { consumer.cancel() }  // from another thread, mid-stream
            let received = await consumer.value
            #expect(received.count >= 1_000 * (round + 1))
            Self.checkPrefixes(received, complete: false)
            await probe.proxyReleased.wait()
            #expect(probe.teardowns.value == 1)
        }
    }

    @Test func fourTaskSenders_rendezvous_everyElementOnce() async {
        let box = SinkBox<Int, Never>()
        let probe = StreamProbe()
        let perSender = stressRounds(20_000)  // below perProducer, which tags each sender's values
        let stream = CallbackStream<Int, Never>.probed(probe, box: box, buffering: .rendezvous)
        let consumer = Task {
            var received: [Int] = []
            for await value in stream { received.append(value) }
            return received
        }
        await box.ready.wait()
        let sink = box.sink
        box.clear()
        await withTaskGroup(of: Void.self) { group in
            for p in 0..<Self.producers {
                group.addTask {
                    for i in 0..<perSender { #expect(await sink.send(p * Self.perProducer + i) == .enqueued) }
                }
            }
        }
        sink.finish()
        let received = await consumer.value
        #expect(received.count == Self.producers * perSender)
        var next = Array(repeating: 0, count: Self.producers)
        for value in received {
            let p = value / Self.perProducer
            #expect(value % Self.perProducer == next[p])
            next[p] += 1
        }
        await probe.proxyReleased.wait()
    }

    @Test func finishRacingCancellation_teardownExactlyOnce() async {
        var ended = 0
        let rounds = stressRounds(2_000)
        for _ in 0..<rounds {
            let probe = StreamProbe()
            let box = SinkBox<Int, Never>()
            let waiting = Signal()
            let stream = CallbackStream<Int, Never>.probed(probe, box: box, buffering: .rendezvous) { sink in
                sink.onDemand { _ in waiting.open() }
            }
            let consumer = Task { for await _ in stream {} }
            await waiting.wait()
            let sink = box.sink
            box.clear()
            DispatchQueue.concurrentPerform(iterations: 2) { side in
                if side == 0 { sink.finish() } else { consumer.cancel() }
            }
            await consumer.value
            await probe.proxyReleased.wait()
            #expect(probe.teardowns.value == 1)
            ended += 1
        }
        #expect(ended == rounds)
    }

    /// The consumer's loop ends only after the teardown returned, even when its task is cancelled
    /// while another thread runs the teardown. A producer thread yields one element and finishes;
    /// the consumer's task is cancelled from a third thread at the same time (even rounds), or from
    /// inside the teardown, once the consumer has taken the element and is heading for the end (odd
    /// rounds). Before it returns, the teardown gives a consumer resumed too early time to end its
    /// loop first. Its waits are bounded spins, not a clock, and never wait for the consumer
    /// unboundedly: on a 2-core machine the consumer's task may need the teardown's own thread.
    @Test func finishRacingCancellation_loopEndsAfterTheTeardownReturned() async {
        let rounds = stressRounds(2_000)
        var inOrder = 0
        var firstOutOfOrder: String?
        for round in 0..<rounds {
            let log = Collected<String>()
            let received = Counter()
            let loopEnded = Counter()
            let consumerTask = Weak<TaskHandle>()
            let built = Signal()
            let produced = Signal()
            let streamReleased = Signal()
            let proxyReleased = Signal()
            let box = SinkBox<Int, Never>()
            let consumer: Task<Void, Never>
            do {
                let canary = Canary(released: streamReleased)
                let stream = CallbackStream<Int, Never> { sink in
                    _ = canary
                    let proxy = ProbeProxy(released: proxyReleased)
                    box.set(sink)
                    built.open()
                    return Cancellation {
                        // Bounded waits: the consumer may need this very thread to run.
                        var spins = 0
                        if round % 2 == 1 {
                            while received.value == 0 && spins < 20_000 { spins += 1 }
                            consumerTask.object?.task.cancel()
                        }
                        spins = 0
                        while loopEnded.value == 0 && spins < 2_000 { spins += 1 }
                        _ = proxy
                        log.append("teardown returned")
                    }
                }
                consumer = Task {
                    for await _ in stream { received.increment() }
                    log.append("loop ended")
                    loopEnded.increment()
                }
            }
            let handle = TaskHandle(consumer)
            consumerTask.object = handle
            await built.wait()
            let sink = box.sink
            box.clear()
            DispatchQueue.global().async {
                sink.yield(round)
                sink.finish()
                produced.open()
            }
            if round % 2 == 0 { DispatchQueue.global().async { consumer.cancel() } }
            await produced.wait()
            await consumer.value
            if log.values == ["teardown returned", "loop ended"] {
                inOrder += 1
            } else if firstOutOfOrder == nil {
                firstOutOfOrder = "round \(round): \(log.values)"
            }
            withExtendedLifetime(handle) {}
            await streamReleased.wait()
            await proxyReleased.wait()
        }
        #expect(inOrder == rounds, "the loop ended before the teardown returned; first: \(firstOutOfOrder ?? "")")
    }
}

/// Lets a teardown reach the consumer's task, which is created after the stream.
private final class TaskHandle: Sendable {
    let task: Task<Void, Never>
    init(_ task: Task<Void, Never>) { self.task = task }
}
