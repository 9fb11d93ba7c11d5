// Case: one upstream shared by `consumers` lossless consumers. The upstream (the same type on both
// sides) yields 0..<n without suspending, once every consumer is connected; each consumer drains
// it in its own task. The figure is ns per element *per consumer* (n × consumers deliveries).
// Bridges: `shared(replay: 1)` (replay 1 only so that a consumer that joins after the upstream's
// first element still sees it: see `ConnectedCount`), each consumer `.unbounded` or
// `.suspending(1)`. Peer: swift-async-algorithms' `share(bufferingPolicy:)`, `.unbounded` or its
// default `.bounded(1)`: lossless and backpressured on both sides.

import AsyncAlgorithms
import Bridges
import Foundation

/// Suspends its waiter until `target` parties have arrived.
final class Arrivals: @unchecked Sendable {
    // @unchecked Sendable: `count` and `waiter` are only touched under `lock`.
    private let lock = NSLock()
    private let target: Int
    private var count = 0
    private var waiter: CheckedContinuation<Void, Never>?

    init(_ target: Int) { self.target = target }

    func arrive() {
        lock.lock()
        count += 1
        let ready = count >= target ? waiter : nil
        if ready != nil { waiter = nil }
        lock.unlock()
        ready?.resume()
    }

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if count >= target {
                lock.unlock()
                continuation.resume()
            } else {
                waiter = continuation
                lock.unlock()
            }
        }
    }
}

/// -1 (a consumer that sees it is connected), then, once every consumer has arrived, 0..<n.
struct ConnectedCount: AsyncSequence, Sendable {
    let n: Int
    let arrivals: Arrivals

    struct AsyncIterator: AsyncIteratorProtocol {
        let n: Int
        let arrivals: Arrivals
        var next = -1

        mutating func next() async -> Int? {
            if next == -1 {
                next = 0
                return -1
            }
            if next == 0 { await arrivals.wait() }
            guard next < n else { return nil }
            defer { next += 1 }
            return next
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(n: n, arrivals: arrivals) }
}

func bridgesShare(consumers: Int, bounded: Bool, n: Int) async throws -> Sample {
    try await detachedRun {
        let (tallies, ns) = await timed { () async -> [Tally] in
            let arrivals = Arrivals(consumers)
            let shared = ConnectedCount(n: n, arrivals: arrivals).shared(replay: 1)
            let tasks = (0..<consumers).map { _ in
                Task { () -> Tally in
                    var tally = Tally()
                    for await x in shared.stream(buffering: bounded ? .suspending(1) : .unbounded) {
                        if x < 0 { arrivals.arrive() } else { tally.add(x) }
                    }
                    return tally
                }
            }
            var tallies: [Tally] = []
            for task in tasks { tallies.append(await task.value) }
            return tallies
        }
        for tally in tallies {
            try tally.check("share.\(consumers) bridges (bounded: \(bounded))", sent: n, lossless: true)
        }
        return Sample(nanoseconds: ns, sent: n * consumers, delivered: tallies.reduce(0) { $0 + $1.count })
    }
}

func asyncAlgorithmsShare(consumers: Int, bounded: Bool, n: Int) async throws -> Sample {
    try await detachedRun {
        let (tallies, ns) = await timed { () async -> [Tally] in
            let arrivals = Arrivals(consumers)
            let shared = ConnectedCount(n: n, arrivals: arrivals).share(
                bufferingPolicy: bounded ? .bounded(1) : .unbounded)
            let tasks = (0..<consumers).map { _ in
                Task { () -> Tally in
                    var tally = Tally()
                    var iterator = shared.makeAsyncIterator()
                    arrivals.arrive()  // connected: its side is registered
                    while let x = await iterator.next(isolation: nil) {
                        if x >= 0 { tally.add(x) }
                    }
                    return tally
                }
            }
            var tallies: [Tally] = []
            for task in tasks { tallies.append(await task.value) }
            return tallies
        }
        for tally in tallies {
            try tally.check("share.\(consumers) AsyncAlgorithms (bounded: \(bounded))", sent: n, lossless: true)
        }
        return Sample(nanoseconds: ns, sent: n * consumers, delivered: tallies.reduce(0) { $0 + $1.count })
    }
}

func runShare(_ config: Config) async {
    for bounded in [false, true] {
        // A `.bounded(1)` / `.suspending(1)` consumer wakes a task per element on both sides.
        let n = bounded ? config.n(10_000, quick: 2_000) : config.n(100_000, quick: 20_000)
        for consumers in [1, 4] {
            let name = "share.\(bounded ? "bounded1" : "unbounded").\(consumers)"
            await compare(
                name, peer: "AAA share \(bounded ? ".bounded(1)" : ".unbounded") ×\(consumers)", config: config,
                bridges: { try await bridgesShare(consumers: consumers, bounded: bounded, n: n) },
                peer: { try await asyncAlgorithmsShare(consumers: consumers, bounded: bounded, n: n) }
            )
        }
    }
}
