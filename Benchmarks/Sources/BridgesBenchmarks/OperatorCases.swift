// Operators: Bridges' `debounce` against swift-async-algorithms' `debounce`, and `mapLatest`
// against the hand-written cancel-previous loop it replaces.
//
// - operators.debounce: n elements from a synchronous upstream, all inside one (long) window, so
//   each element restarts the window; the upstream then finishes and both emit the pending
//   element at once (both do). Per element: the cost of restarting the window. Exactly one
//   element (n-1) must arrive.
// - operators.mapLatest: n elements, each transformed by a trivial async transform that yields
//   once; a newer element cancels the previous transform. The peer is the loop people write
//   (`current?.cancel(); current = Task { … yield(result) }` into an AsyncStream), which can emit
//   a stale result after a newer one: it is timed, and its reorderings are counted, not failed.
//   Bridges must deliver an increasing subsequence ending in n-1.

import AsyncAlgorithms
import Bridges
import Foundation

/// What an operator's consumer saw (local, so this file does not depend on the other cases').
private struct OperatorTally {
    var count = 0
    var last = Int.min
    var outOfOrder = 0

    mutating func add(_ x: Int) {
        if x <= last { outOfOrder += 1 }
        last = x
        count += 1
    }

    /// In order, nothing invented, and the newest element arrived (nothing at all when nothing
    /// was sent: the callgrind script's baseline run sends 0).
    func check(_ what: String, sent: Int, exactlyOne: Bool = false) throws {
        if sent == 0 {
            guard count == 0 else { throw BenchFailure("\(what): sent nothing, delivered \(count)") }
            return
        }
        guard outOfOrder == 0, count <= sent, last == sent - 1, !exactlyOne || count == 1 else {
            throw BenchFailure(
                "\(what): sent 0..<\(sent), delivered \(count), last \(last), out of order \(outOfOrder)")
        }
    }

    func sample(ns: Double, sent: Int) -> Sample { Sample(nanoseconds: ns, sent: sent, delivered: count) }
}

/// A window no run reaches: every element restarts it, the end flushes the last one.
private let longWindow = Duration.seconds(3600)

private func debounceBridges(n: Int) async -> OperatorTally {
    let debounced = (0..<n).async.debounce(for: longWindow, clock: ContinuousClock(), buffering: .unbounded)
    var tally = OperatorTally()
    for await x in debounced { tally.add(x) }
    return tally
}

private func debounceAsyncAlgorithms(n: Int) async -> OperatorTally {
    let debounced = (0..<n).async.debounce(for: longWindow, clock: ContinuousClock())
    var tally = OperatorTally()
    for await x in debounced { tally.add(x) }
    return tally
}

@Sendable private func transform(_ x: Int) async -> Int {
    await Task.yield()
    return x
}

private func mapLatestBridges(n: Int) async -> OperatorTally {
    var tally = OperatorTally()
    for await x in (0..<n).async.mapLatest(transform) { tally.add(x) }
    return tally
}

/// The hand-written cancel-previous loop: what `mapLatest` replaces.
private func mapLatestHandWritten(n: Int) async -> OperatorTally {
    let (results, continuation) = AsyncStream.makeStream(of: Int.self)
    let upstream = Task {
        var current: Task<Void, Never>?
        for await x in (0..<n).async {
            current?.cancel()
            current = Task {
                let result = await transform(x)
                if !Task.isCancelled { continuation.yield(result) }
            }
        }
        await current?.value
        continuation.finish()
    }
    var tally = OperatorTally()
    for await x in results { tally.add(x) }
    await upstream.value
    return tally
}

@MainActor
func runOperators(_ config: Config) async {
    let n = config.n(20_000, quick: 2_000)
    await compare(
        "operators.debounce", peer: "AsyncAlgorithms.debounce", lossy: true, config: config,
        bridges: {
            let (tally, ns) = await timed { await debounceBridges(n: n) }
            try tally.check("operators.debounce bridges", sent: n, exactlyOne: true)
            return tally.sample(ns: ns, sent: n)
        },
        peer: {
            let (tally, ns) = await timed { await debounceAsyncAlgorithms(n: n) }
            try tally.check("operators.debounce AsyncAlgorithms", sent: n, exactlyOne: true)
            return tally.sample(ns: ns, sent: n)
        }
    )
    var staleFromPeer = 0
    await compare(
        "operators.mapLatest", peer: "hand-written cancel-previous", lossy: true, config: config,
        bridges: {
            let (tally, ns) = await timed { await mapLatestBridges(n: n) }
            try tally.check("operators.mapLatest bridges", sent: n)
            return tally.sample(ns: ns, sent: n)
        },
        peer: {
            let (tally, ns) = await timed { await mapLatestHandWritten(n: n) }
            staleFromPeer += tally.outOfOrder
            return tally.sample(ns: ns, sent: n)
        }
    )
    if config.wants("operators.mapLatest") {
        note(
            "operators.mapLatest: the hand-written loop emitted \(staleFromPeer) stale result(s) after a newer one over all its runs; Bridges none (checked)"
        )
    }
}
