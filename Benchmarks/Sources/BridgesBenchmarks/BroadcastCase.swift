// Case: Broadcast fan-out. One producer thread sends 0..<n to `consumers` unbounded subscribers,
// each drained by its own task; the figure is ns per element *per consumer* (n × consumers
// deliveries). The peer is the same fan-out written by hand: one AsyncStream per consumer, the
// producer yielding to each in turn.

import Bridges
import Foundation

func bridgesBroadcast(consumers: Int, n: Int) async throws -> Sample {
    try await detachedRun {
        let (tallies, ns) = await timed { () async -> [Tally] in
            let events = Broadcast<Int>()
            let tasks = (0..<consumers).map { _ in
                Task { () -> Tally in
                    var tally = Tally()
                    for await x in events.stream(buffering: .unbounded) { tally.add(x) }
                    return tally
                }
            }
            await events.waitForSubscribers(consumers)
            onThread {
                for i in 0..<n { events.yield(i) }
                events.finish()
            }
            var tallies: [Tally] = []
            for task in tasks { tallies.append(await task.value) }
            return tallies
        }
        for tally in tallies { try tally.check("broadcast.\(consumers) bridges", sent: n, lossless: true) }
        return Sample(nanoseconds: ns, sent: n * consumers, delivered: tallies.reduce(0) { $0 + $1.count })
    }
}

func asyncStreamFanOut(consumers: Int, n: Int) async throws -> Sample {
    try await detachedRun {
        let (tallies, ns) = await timed { () async -> [Tally] in
            let pairs = (0..<consumers).map { _ in AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded) }
            let tasks = pairs.map { pair in
                Task { () -> Tally in
                    var tally = Tally()
                    for await x in pair.stream { tally.add(x) }
                    return tally
                }
            }
            let continuations = pairs.map(\.continuation)
            onThread {
                for i in 0..<n { for continuation in continuations { continuation.yield(i) } }
                for continuation in continuations { continuation.finish() }
            }
            var tallies: [Tally] = []
            for task in tasks { tallies.append(await task.value) }
            return tallies
        }
        for tally in tallies { try tally.check("broadcast.\(consumers) AsyncStream", sent: n, lossless: true) }
        return Sample(nanoseconds: ns, sent: n * consumers, delivered: tallies.reduce(0) { $0 + $1.count })
    }
}

func runBroadcast(_ config: Config) async {
    let n = config.n(100_000, quick: 20_000)
    for consumers in [1, 4] {
        await compare(
            "broadcast.\(consumers)", peer: "AsyncStream ×\(consumers)", config: config,
            bridges: { try await bridgesBroadcast(consumers: consumers, n: n) },
            peer: { try await asyncStreamFanOut(consumers: consumers, n: n) }
        )
    }
}
