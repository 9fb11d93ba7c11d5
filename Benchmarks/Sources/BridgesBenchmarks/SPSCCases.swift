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
        try tally.check("spsc.\(producer).\(policy.rawValue) bridges", sent: n, lossless: policy.lossless, keepsNewest: policy.keepsNewest)
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
        try tally.check("spsc.\(producer).\(policy.rawValue) AsyncStream", sent: n, lossless: policy.lossless, keepsNewest: policy.keepsNewest)
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
    init(_ source: consuming MultiProducerSingleConsumerAsyncChannel<Int, Never>.Source) { self.source = consume source }
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
                peer: { try await asyncStreamSPSC(policy, producer, n: n) }
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
        "rendezvous.thread", peer: "AsyncChannel(task)", config: config,
        bridges: { try await bridgesWaiting(.rendezvous, .thread, n: n, name: "rendezvous.thread") },
        peer: { try await asyncChannelRendezvous(n: n) }
    )
    for capacity in [16] {
        await compare(
            "suspending(\(capacity)).task", peer: "MPSCChannel(wm \(capacity / 2)-\(capacity))", config: config,
            bridges: { try await bridgesWaiting(.suspending(capacity), .task, n: n, name: "suspending(\(capacity)).task") },
            peer: { try await mpscChannelWatermark(capacity: capacity, n: n) }
        )
        await compare(
            "suspending(\(capacity)).thread", peer: "MPSCChannel(task)", config: config,
            bridges: { try await bridgesWaiting(.suspending(capacity), .thread, n: n, name: "suspending(\(capacity)).thread") },
            peer: { try await mpscChannelWatermark(capacity: capacity, n: n) }
        )
    }
}
