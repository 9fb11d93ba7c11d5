// Case 7: scaling. (a) 1, 2, 4, 8 producer threads into one consumer of an unbounded stream;
// (b) the cost per element as the buffer depth grows: one task fills the buffer to depth D,
// then drains it, n/D times over; a ring buffer keeps this flat, a buffer that shifts or
// copies on removal does not.

import Bridges
import Foundation

/// Starts `producers` threads that together yield `0..<n` (producer p yields p, p+k, p+2k, …),
/// and calls `finish` after the last one is done.
func startProducers(
    _ producers: Int, n: Int, yield: @escaping @Sendable (Int) -> Void, finish: @escaping @Sendable () -> Void
) {
    let group = DispatchGroup()
    for p in 0..<producers {
        group.enter()
        onThread {
            var i = p
            while i < n {
                yield(i)
                i += producers
            }
            group.leave()
        }
    }
    group.notify(queue: .global()) { finish() }
}

func bridgesMPSC(producers: Int, n: Int) async throws -> Sample {
    try await detachedRun {
        let (tally, ns) = await timed { () async -> Tally in
            let stream = CallbackStream<Int, Never>(buffering: .unbounded) { sink in
                startProducers(producers, n: n, yield: { _ = sink.yield($0) }, finish: { sink.finish() })
                return Cancellation {}
            }
            var tally = Tally()
            for await x in stream { tally.addUnordered(x) }
            return tally
        }
        try tally.check("producers.\(producers) bridges", sent: n, lossless: true)
        return tally.sample(ns: ns, sent: n)
    }
}

func asyncStreamMPSC(producers: Int, n: Int) async throws -> Sample {
    try await detachedRun {
        let (tally, ns) = await timed { () async -> Tally in
            let stream = AsyncStream<Int>(bufferingPolicy: .unbounded) { continuation in
                startProducers(producers, n: n, yield: { continuation.yield($0) }, finish: { continuation.finish() })
            }
            var tally = Tally()
            for await x in stream { tally.addUnordered(x) }
            return tally
        }
        try tally.check("producers.\(producers) AsyncStream", sent: n, lossless: true)
        return tally.sample(ns: ns, sent: n)
    }
}

/// Fill to `depth`, drain, repeat: all in one task, so no hand-over cost, only the buffer's.
func bridgesDepth(_ depth: Int, n: Int) async throws -> Sample {
    try await detachedRun {
        let rounds = n == 0 ? 0 : max(n / depth, 1)
        let (tally, ns) = await timed { () async -> Tally in
            let box = Box<CallbackStream<Int, Never>.Sink>()
            let stream = CallbackStream<Int, Never>(buffering: .unbounded) { sink in
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
                for _ in 0..<depth {
                    _ = sink.yield(value)
                    value += 1
                }
                for _ in 0..<depth { tally.add(await iterator.next()!) }
            }
            sink.finish()
            return tally
        }
        try tally.check("depth.\(depth) bridges", sent: rounds * depth, lossless: true)
        return tally.sample(ns: ns, sent: rounds * depth)
    }
}

func asyncStreamDepth(_ depth: Int, n: Int) async throws -> Sample {
    try await detachedRun {
        let rounds = n == 0 ? 0 : max(n / depth, 1)
        let (tally, ns) = await timed { () async -> Tally in
            let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
            var iterator = stream.makeAsyncIterator()
            var tally = Tally()
            var value = 0
            for _ in 0..<rounds {
                for _ in 0..<depth {
                    continuation.yield(value)
                    value += 1
                }
                for _ in 0..<depth { tally.add(await iterator.next()!) }
            }
            return tally
        }
        try tally.check("depth.\(depth) AsyncStream", sent: rounds * depth, lossless: true)
        return tally.sample(ns: ns, sent: rounds * depth)
    }
}

@MainActor
func runScaling(_ config: Config) async {
    let n = config.n(200_000, quick: 40_000)
    for producers in [1, 2, 4, 8] {
        await compare(
            "producers.\(producers)", peer: "AsyncStream", config: config,
            bridges: { try await bridgesMPSC(producers: producers, n: n) },
            peer: { try await asyncStreamMPSC(producers: producers, n: n) }
        )
    }
    let depthN = config.n(1 << 18, quick: 1 << 16)
    let depths = [1, 16, 1024, 1 << 16]
    for depth in depths {
        await compare(
            "depth.\(depth)", peer: "AsyncStream", config: config,
            bridges: { try await bridgesDepth(depth, n: depthN) },
            peer: { try await asyncStreamDepth(depth, n: depthN) },
            limit: { try await limitDepth(depth, n: depthN) }
        )
    }
    let rows = Report.shared.rows.filter { $0.name.hasPrefix("depth.") }
    if let small = rows.first(where: { $0.name == "depth.16" }),
        let large = rows.first(where: { $0.name == "depth.\(1 << 16)" })
    {
        note(
            "buffer depth 16 → 65536: bridges \(fmt(small.bridges)) → \(fmt(large.bridges)) ns/el (×\(fmt(large.bridges / small.bridges, 2))), AsyncStream \(fmt(small.peer)) → \(fmt(large.peer)) ns/el (×\(fmt(large.peer / small.peer, 2))); flat means ×1.0 (cache misses make any buffer somewhat dearer once it outgrows L2)"
        )
    }
}
