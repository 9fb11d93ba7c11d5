// Case 1: SPSC throughput, producer on a thread and on a Task, per policy, vs AsyncStream with
// the matching policy. Case 2: .rendezvous vs AsyncChannel, .suspending(n) vs
// MultiProducerSingleConsumerAsyncChannel with watermarks. The consumer runs in a detached task
// (off the main actor); the clock runs from before the stream is made until the consumer has
// seen the end, so it covers production, hand-over and consumption.

import AsyncAlgorithms
import Bridges
import Foundation

// MARK: - Bridges side

func bridgesSPSC(_ policy: SPSCPolicy, _ producer: ProducerKind, n: Int) async throws -> Sample {
    try await detachedRun {
        let (tally, ns) = await timed { () async -> Tally in
            let stream = CallbackStream<Int, Never>(buffering: policy.bridges) { sink in
                switch producer {
                case .thread:
                    onThread {
                        for i in 0..<n { _ = sink.yield(i) }
                        sink.finish()
                    }
                case .task:
                    Task.detached {
                        for i in 0..<n { _ = sink.yield(i) }
                        sink.finish()
                    }
                }
                return Cancellation {}
            }
            var tally = Tally()
            for await x in stream { tally.add(x) }
            return tally
        }
        try tally.check(
            "spsc.\(producer).\(policy.rawValue) bridges", sent: n, lossless: policy.lossless,
            keepsNewest: policy.keepsNewest)
        return tally.sample(ns: ns, sent: n)
    }
}

/// A waiting policy (`.rendezvous`, `.suspending(n)`): a Task producer uses `await send`; a
/// thread producer is a pausable source driven by `onDemand`: it holds one credit per element
/// the consumer can take (a semaphore signalled n times by `onDemand(n)`) and blocks for a
/// credit before each `yield`, so it never overfills the buffer.
func bridgesWaiting(_ policy: StreamPolicy, _ producer: ProducerKind, n: Int, name: String) async throws -> Sample {
    try await detachedRun {
        let (tally, ns) = await timed { () async -> Tally in
            let stream = CallbackStream<Int, Never>(buffering: policy) { sink in
                switch producer {
                case .thread:
                    let credits = DispatchSemaphore(value: 0)
                    sink.onDemand { count in for _ in 0..<min(count, n) { credits.signal() } }
                    onThread {
                        for i in 0..<n {
                            credits.wait()
                            _ = sink.yield(i)
                        }
                        sink.finish()
                    }
                case .task:
                    Task.detached {
                        for i in 0..<n { _ = await sink.send(i) }
                        sink.finish()
                    }
                }
                return Cancellation {}
            }
            var tally = Tally()
            for await x in stream { tally.add(x) }
            return tally
        }
        try tally.check("\(name) bridges", sent: n, lossless: true)
        return tally.sample(ns: ns, sent: n)
    }
}

// MARK: - Peers

func asyncStreamSPSC(_ policy: SPSCPolicy, _ producer: ProducerKind, n: Int) async throws -> Sample {
    try await detachedRun {
        let (tally, ns) = await timed { () async -> Tally in
            let stream = AsyncStream<Int>(bufferingPolicy: policy.asyncStream) { continuation in
                switch producer {
                case .thread:
                    onThread {
                        for i in 0..<n { continuation.yield(i) }
                        continuation.finish()
                    }
                case .task:
                    Task.detached {
                        for i in 0..<n { continuation.yield(i) }
                        continuation.finish()
                    }
                }
            }
            var tally = Tally()
            for await x in stream { tally.add(x) }
            return tally
        }
        try tally.check(
            "spsc.\(producer).\(policy.rawValue) AsyncStream", sent: n, lossless: policy.lossless,
            keepsNewest: policy.keepsNewest)
        return tally.sample(ns: ns, sent: n)
    }
}

func asyncChannelRendezvous(n: Int) async throws -> Sample {
    try await detachedRun {
        let (tally, ns) = await timed { () async -> Tally in
            let channel = AsyncChannel<Int>()
            Task.detached {
                for i in 0..<n { await channel.send(i) }
                channel.finish()
            }
            var tally = Tally()
            for await x in channel { tally.add(x) }
            return tally
        }
        try tally.check("rendezvous AsyncChannel", sent: n, lossless: true)
        return tally.sample(ns: ns, sent: n)
    }
}

/// Owns the non-copyable source until the producer task takes it.
final class SourceBox: @unchecked Sendable {
    // @unchecked Sendable: the source is taken exactly once, by the one producer task.
    var source: MultiProducerSingleConsumerAsyncChannel<Int, Never>.Source?
    init(_ source: consuming MultiProducerSingleConsumerAsyncChannel<Int, Never>.Source) {
        self.source = consume source
    }
}

func mpscChannelWatermark(capacity: Int, n: Int) async throws -> Sample {
    try await detachedRun {
        let (tally, ns) = await timed { () async -> Tally in
            var pair = MultiProducerSingleConsumerAsyncChannel.makeChannel(
                of: Int.self,
                backpressureStrategy: .watermark(low: max(capacity / 2, 1), high: capacity)
            )
            var channel = pair.takeChannel()
            let box = SourceBox(pair.source)
            Task.detached {
                var source = box.source.take()!
                for i in 0..<n { try? await source.send(i) }
                source.finish()
            }
            var tally = Tally()
            while let x = await channel.next() { tally.add(x) }
            return tally
        }
        try tally.check("suspending MPSC channel", sent: n, lossless: true)
        return tally.sample(ns: ns, sent: n)
    }
}

// MARK: - Cases

@MainActor
func runSPSC(_ config: Config) async {
    let n = config.n(200_000, quick: 40_000)
    for producer in [ProducerKind.thread, .task] {
        for policy in SPSCPolicy.allCases {
            await compare(
                "spsc.\(producer).\(policy.rawValue)", peer: "AsyncStream", lossy: !policy.lossless, config: config,
                bridges: { try await bridgesSPSC(policy, producer, n: n) },
                peer: { try await asyncStreamSPSC(policy, producer, n: n) },
                limit: policy == .unbounded ? { try await limitSPSC(producer, n: n) } : nil
            )
        }
    }
    // Lossy at equal delivery: deterministic, so the speedup is like for like.
    for policy in [SPSCPolicy.latest, .dropOldest16] {
        await compare(
            "spsc.burst64.\(policy.rawValue)", peer: "AsyncStream", lossy: true, config: config,
            bridges: { try await bridgesBurst(policy, n: n) },
            peer: { try await asyncStreamBurst(policy, n: n) }
        )
    }
}

// MARK: - Lossy at equal delivery

extension SPSCPolicy {
    /// How many of a burst a keep-newest policy keeps.
    var keeps: Int { self == .latest ? 1 : 16 }
}

/// One task yields a burst of 64 into a keep-newest buffer, then takes what was kept (1 or 16),
/// n/64 times: both sides deliver exactly the same elements (the newest of each burst), so the
/// per-delivered-element figures compare like for like. Measures the dropping path.
func bridgesBurst(_ policy: SPSCPolicy, n: Int) async throws -> Sample {
    try await detachedRun {
        let rounds = n / 64
        let (tally, ns) = await timed { () async -> Tally in
            let box = Box<CallbackStream<Int, Never>.Sink>()
            let stream = CallbackStream<Int, Never>(buffering: policy.bridges) { sink in
                box.value = sink
                _ = sink.yield(-1)  // the iterator's first next() runs the builder and takes this
                return Cancellation {}
            }
            var iterator = stream.makeAsyncIterator()
            _ = await iterator.next()
            let sink = box.value!
            var tally = Tally()
            var value = 0
            for _ in 0..<rounds {
                for _ in 0..<64 {
                    _ = sink.yield(value)
                    value += 1
                }
                for _ in 0..<policy.keeps { tally.add(await iterator.next()!) }
            }
            sink.finish()
            return tally
        }
        try tally.checkBurst("spsc.burst64.\(policy.rawValue) bridges", rounds: rounds, keeps: policy.keeps)
        return tally.sample(ns: ns, sent: rounds * 64)
    }
}

func asyncStreamBurst(_ policy: SPSCPolicy, n: Int) async throws -> Sample {
    try await detachedRun {
        let rounds = n / 64
        let (tally, ns) = await timed { () async -> Tally in
            let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: policy.asyncStream)
            var iterator = stream.makeAsyncIterator()
            var tally = Tally()
            var value = 0
            for _ in 0..<rounds {
                for _ in 0..<64 {
                    continuation.yield(value)
                    value += 1
                }
                for _ in 0..<policy.keeps { tally.add(await iterator.next()!) }
            }
            continuation.finish()
            return tally
        }
        try tally.checkBurst("spsc.burst64.\(policy.rawValue) AsyncStream", rounds: rounds, keeps: policy.keeps)
        return tally.sample(ns: ns, sent: rounds * 64)
    }
}

extension Tally {
    /// Exactly the `keeps` newest of every burst of 64, in order.
    func checkBurst(_ what: String, rounds: Int, keeps: Int) throws {
        // The kept elements of round r are 64r + 64 - keeps ..< 64r + 64.
        let expectedSum = (0..<rounds).reduce(0) { sum, r in
            sum + (0..<keeps).reduce(0) { $0 + 64 * r + 64 - keeps + $1 }
        }
        guard count == rounds * keeps, sum == expectedSum, outOfOrder == 0 else {
            throw BenchFailure(
                "\(what): expected the \(keeps) newest of each of \(rounds) bursts, got \(count) elements, sum \(sum) (expected \(expectedSum)), out of order \(outOfOrder)"
            )
        }
    }
}

@MainActor
func runWaiting(_ config: Config) async {
    // Every element is a hand-over between two tasks (or a thread and a task): on a loaded
    // 2-core machine that is a wake-up of 1–15 µs, so fewer elements than the buffered cases.
    let n = config.n(50_000, quick: 10_000)
    await compare(
        "rendezvous.task", peer: "AsyncChannel", config: config,
        bridges: { try await bridgesWaiting(.rendezvous, .task, n: n, name: "rendezvous.task") },
        peer: { try await asyncChannelRendezvous(n: n) }
    )
    await compare(
        "rendezvous.thread", peer: "AsyncChannel(task)", noClaim: "thread producer vs the peer's task producer",
        config: config,
        bridges: { try await bridgesWaiting(.rendezvous, .thread, n: n, name: "rendezvous.thread") },
        peer: { try await asyncChannelRendezvous(n: n) }
    )
    for capacity in [16] {
        await compare(
            "suspending(\(capacity)).task", peer: "MPSCChannel(wm \(capacity / 2)-\(capacity))", config: config,
            bridges: {
                try await bridgesWaiting(.suspending(capacity), .task, n: n, name: "suspending(\(capacity)).task")
            },
            peer: { try await mpscChannelWatermark(capacity: capacity, n: n) }
        )
        await compare(
            "suspending(\(capacity)).thread", peer: "MPSCChannel(task)",
            noClaim: "thread producer vs the peer's task producer", config: config,
            bridges: {
                try await bridgesWaiting(.suspending(capacity), .thread, n: n, name: "suspending(\(capacity)).thread")
            },
            peer: { try await mpscChannelWatermark(capacity: capacity, n: n) }
        )
    }
}
