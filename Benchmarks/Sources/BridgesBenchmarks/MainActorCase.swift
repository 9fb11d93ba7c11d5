// Case 3: a @MainActor consumer draining a buffered stream. The producer fills n elements
// synchronously, then the main actor drains them. AsyncStream's iterator is nonisolated, so
// every `next()` hops off the main actor and back; an isolation-aware iterator
// (`next(isolation:)`) takes buffered elements without leaving the actor.

import Bridges
import Foundation

@MainActor
func drainBridgesOnMain(n: Int) async -> Tally {
    let stream = CallbackStream<Int, Never>(buffering: .unbounded) { sink in
        for i in 0..<n { _ = sink.yield(i) }
        sink.finish()
        return Cancellation {}
    }
    var tally = Tally()
    for await x in stream { tally.add(x) }
    return tally
}

@MainActor
func drainAsyncStreamOnMain(n: Int) async -> Tally {
    let stream = AsyncStream<Int>(bufferingPolicy: .unbounded) { continuation in
        for i in 0..<n { continuation.yield(i) }
        continuation.finish()
    }
    var tally = Tally()
    for await x in stream { tally.add(x) }
    return tally
}

@MainActor
func runMainActor(_ config: Config) async {
    let n = config.n(20_000, quick: 10_000)  // the peer pays ~10–20 µs per element
    await compare(
        "mainactor.drain", peer: "AsyncStream", config: config,
        bridges: {
            let (tally, ns) = await timed { await drainBridgesOnMain(n: n) }
            try tally.check("mainactor.drain bridges", sent: n, lossless: true)
            return tally.sample(ns: ns, sent: n)
        },
        peer: {
            let (tally, ns) = await timed { await drainAsyncStreamOnMain(n: n) }
            try tally.check("mainactor.drain AsyncStream", sent: n, lossless: true)
            return tally.sample(ns: ns, sent: n)
        }
    )
}
