// The racing pairs of the test suite's heaviest thread-stress tests, at their full volume: here
// in release mode, on idle cores. The plain `swift test` runs a tenth of their rounds
// (Tests/TestSupport/StressRounds.swift), so that it passes on a busy machine; the races need
// the volume to show, and the volume needs cores.

import Bridges
import Dispatch
import Synchronization

/// A source that produces `0..<count` on its own serial queue while running, and is paused and
/// resumed through a `DemandGate` (a socket's or a file handle's shape): the pattern of
/// `CallbackStreamContractTests.pauseResumeThroughDemandGate_…`.
final class PausableSource: Tracked, @unchecked Sendable {  // `next`, `paused`, `finished`: on `queue` only
    /// Serial queues the sources take turns on: one per op would churn Dispatch's caches, which
    /// the heap check would read as growth.
    private static let queues = (0..<8).map { DispatchQueue(label: "soak.PausableSource.\($0)") }
    private let queue: DispatchQueue
    private let count: Int
    private let sink: CallbackStream<Int, Never>.Sink
    private var next = 0
    private var paused = false
    private var finished = false
    /// Set before `resume()`; the stream's `onDemand` and teardown hold the gate.
    weak var gate: DemandGate?

    init(count: Int, sink: CallbackStream<Int, Never>.Sink, queue index: Int) {
        self.count = count
        self.sink = sink
        // Warm-up ops count below 0.
        queue = Self.queues[(index % Self.queues.count + Self.queues.count) % Self.queues.count]
    }

    func pause() { queue.async { self.paused = true } }

    func resume() {
        queue.async {
            self.paused = false
            self.produce()
        }
    }

    private func produce() {
        while !paused && next < count {
            let value = next
            next += 1
            let room = gate?.spend()  // spend, then yield (see DemandGate)
            if case .terminated = sink.yield(value) { return }
            if room == false { break }
        }
        if next == count && !finished {
            finished = true
            sink.finish()
        }
    }
}

/// An upstream that answers at once, never suspending: 1…5.
struct Immediate: AsyncSequence, Sendable {
    let upstream: Producer
    struct AsyncIterator: AsyncIteratorProtocol {
        let upstream: Producer
        var last = 0
        mutating func next() async -> Int? {
            guard last < 5 else { return nil }
            last += 1
            return last
        }
    }
    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(upstream: upstream) }
}

func stressCases() -> [SoakCase] {
    [
        // A source paused when its credit runs out and resumed when the consumer makes room, with
        // `.suspending(1)` and a consumer faster than the producer: `onDemand` lands in the gap
        // between `yield` and the pause as often as possible. A lost wake-up hangs an op (the
        // step's bound names the case); every element arrives, in order.
        SoakCase(
            "CallbackStream .suspending(1), paused/resumed through DemandGate", ops: 20_000, elements: 16, lanes: 1
        ) { i, last in
            let stream = CallbackStream<Int, Never>(buffering: .suspending(1)) { sink in
                let source = PausableSource(count: 16, sink: sink, queue: i)
                last.set(source)
                let gate = DemandGate(pause: { source.pause() }, resume: { source.resume() })
                source.gate = gate
                sink.onDemand { gate.add($0) }
                source.resume()
                return Cancellation { gate.stop() }
            }
            var received = 0
            for await value in stream {
                guard value == received else { return -1 }  // out of order: the count fails
                received += 1
            }
            return received
        },
        // Four producers on Dispatch workers at once, one consumer: every element once, each
        // producer's in its order (`CallbackStreamStressTests.fourThreadProducers_…`).
        SoakCase("CallbackStream 4 producer threads, every element once, in order", elements: 64, lanes: 2) { i, last in
            let perProducer = 16
            let stream = CallbackStream<Int, Never>(buffering: i % 2 == 0 ? .unbounded : .rendezvous) { sink in
                let producer = Producer()
                last.set(producer)
                DispatchQueue.global().async {
                    DispatchQueue.concurrentPerform(iterations: 4) { p in
                        for value in 0..<perProducer { _ = sink.yield(p * perProducer + value) }
                    }
                    sink.finish()
                }
                return Cancellation { _ = producer }
            }
            var next = [0, 0, 0, 0]
            var received = 0
            for await value in stream {
                let p = value / perProducer
                guard value % perProducer == next[p] else { return -1 }  // duplicated, lost or out of order
                next[p] += 1
                received += 1
            }
            return received
        },
        // `shared()` over an upstream that never suspends: the consumer that starts the iteration
        // has subscribed before the first pull, so it gets every element
        // (`SharedSequenceTests.theConsumerThatStartsTheIteration_…`).
        SoakCase("shared(): the first consumer of an upstream that never suspends gets all", elements: 5) { i, last in
            let upstream = Producer()
            last.set(upstream)
            var received = 0
            for await value in Immediate(upstream: upstream).shared() {
                guard value == received + 1 else { return -1 }
                received += 1
            }
            return received
        },
    ]
}
