// Case 6: memory. Method: glibc's mallinfo2().uordblks (bytes in allocated chunks, headers and
// rounding included, i.e. what the allocator really hands out) before and after creating K
// objects that stay alive, divided by K. mallinfo2 covers the main arena only, so everything
// measured is allocated on the main thread (these functions are @MainActor and the allocations
// that persist happen synchronously there); arrays holding the K objects are reserved up front
// so their own growth is not counted.

import Bridges
import BridgesCombine
import CMallocInfo
import Foundation

#if canImport(Combine)
import Combine  // Apple platforms: BridgesCombine is built on Apple's Combine, so the cases use its publishers
#else
import OpenCombine
#endif

@MainActor
func allocatedBytes() -> Int {
    Int(bench_allocated_bytes())
}

/// Bytes per buffered `Int` (stride 8) after `k` elements were yielded and none consumed.
@MainActor
func bridgesBytesPerBufferedElement(k: Int) async -> Double {
    let box = Box<CallbackStream<Int, Never>.Sink>()
    let stream = CallbackStream<Int, Never>(buffering: .unbounded) { sink in
        box.value = sink
        _ = sink.yield(-1)
        return Cancellation {}
    }
    var iterator = stream.makeAsyncIterator()
    _ = await iterator.next()
    let sink = box.value!
    let before = allocatedBytes()
    for i in 0..<k { _ = sink.yield(i) }
    let after = allocatedBytes()
    sink.finish()
    withExtendedLifetime(iterator) {}
    return Double(after - before) / Double(k)
}

@MainActor
func asyncStreamBytesPerBufferedElement(k: Int) -> Double {
    let (stream, continuation) = AsyncStream.makeStream(of: Int.self, bufferingPolicy: .unbounded)
    let before = allocatedBytes()
    for i in 0..<k { continuation.yield(i) }
    let after = allocatedBytes()
    withExtendedLifetime(stream) {}
    return Double(after - before) / Double(k)
}

/// Bytes per stream made but not iterated (a cold `CallbackStream` runs nothing yet; an
/// `AsyncStream` has built its storage and holds its continuation).
@MainActor
func bridgesBytesPerCreatedStream(k: Int) -> Double {
    var streams: [CallbackStream<Int, Never>] = []
    streams.reserveCapacity(k)
    let before = allocatedBytes()
    for _ in 0..<k {
        streams.append(
            CallbackStream<Int, Never>(buffering: .unbounded) { sink in
                sink.finish()
                return Cancellation {}
            })
    }
    let after = allocatedBytes()
    withExtendedLifetime(streams) {}
    return Double(after - before) / Double(k)
}

@MainActor
func asyncStreamBytesPerCreatedStream(k: Int) -> Double {
    var streams: [(AsyncStream<Int>, AsyncStream<Int>.Continuation)] = []
    streams.reserveCapacity(k)
    let before = allocatedBytes()
    for _ in 0..<k { streams.append(AsyncStream.makeStream(of: Int.self)) }
    let after = allocatedBytes()
    withExtendedLifetime(streams) {}
    return Double(after - before) / Double(k)
}

/// Bytes per started, idle stream: the producer is live (its sink held), the iterator exists and
/// has taken the one element there was; nothing is buffered. The builder closures (what a user's
/// builder captures is the user's cost, not the engine's) are made before the measurement.
@MainActor
func bridgesBytesPerIdleStream(k: Int) async -> Double {
    var iterators: [CallbackStream<Int, Never>.AsyncIterator] = []
    iterators.reserveCapacity(k)
    let sinks = Box<[CallbackStream<Int, Never>.Sink]>([])
    sinks.value!.reserveCapacity(k)
    let builders = (0..<k).map { _ in
        { @Sendable (sink: CallbackStream<Int, Never>.Sink) -> Cancellation in
            sinks.value!.append(sink)
            _ = sink.yield(0)
            return Cancellation {}
        }
    }
    let before = allocatedBytes()
    for builder in builders {
        var iterator = CallbackStream<Int, Never>(buffering: .unbounded, builder).makeAsyncIterator()
        _ = await iterator.next()
        iterators.append(iterator)
    }
    let after = allocatedBytes()
    for sink in sinks.value! { sink.finish() }
    withExtendedLifetime(iterators) {}
    return Double(after - before) / Double(k)
}

@MainActor
func asyncStreamBytesPerIdleStream(k: Int) async -> Double {
    var iterators: [AsyncStream<Int>.Iterator] = []
    iterators.reserveCapacity(k)
    var continuations: [AsyncStream<Int>.Continuation] = []
    continuations.reserveCapacity(k)
    let before = allocatedBytes()
    for _ in 0..<k {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        continuation.yield(0)
        var iterator = stream.makeAsyncIterator()
        _ = await iterator.next()
        iterators.append(iterator)
        continuations.append(continuation)
    }
    let after = allocatedBytes()
    withExtendedLifetime(iterators) {}
    withExtendedLifetime(continuations) {}
    return Double(after - before) / Double(k)
}

/// Bytes per live subscription to a CurrentValueSubject: the iterator has subscribed and taken
/// the current value; the subscription stays open.
@MainActor
func bridgesBytesPerSubscription(_ policy: StreamPolicy, k: Int) async -> Double {
    let subject = CurrentValueSubject<Int, Never>(0)
    var iterators: [CallbackStream<Int, Never>.AsyncIterator] = []
    iterators.reserveCapacity(k)
    let before = allocatedBytes()
    for _ in 0..<k {
        var iterator = subject.stream(buffering: policy).makeAsyncIterator()
        _ = await iterator.next()
        iterators.append(iterator)
    }
    let after = allocatedBytes()
    withExtendedLifetime(iterators) {}
    withExtendedLifetime(subject) {}
    return Double(after - before) / Double(k)
}

@MainActor
func valuesBytesPerSubscription(k: Int) async -> Double {
    let subject = CurrentValueSubject<Int, Never>(0)
    var iterators: [AsyncPublisher<CurrentValueSubject<Int, Never>>.Iterator] = []
    iterators.reserveCapacity(k)
    let before = allocatedBytes()
    for _ in 0..<k {
        var iterator = subject.values.makeAsyncIterator()
        _ = await iterator.next()
        iterators.append(iterator)
    }
    let after = allocatedBytes()
    withExtendedLifetime(iterators) {}
    withExtendedLifetime(subject) {}
    return Double(after - before) / Double(k)
}

@MainActor
func recordMemory(
    _ name: String, peer: String, note: String, config: Config, bridges: () async -> Double,
    peerValue: () async -> Double
) async {
    guard config.wants(name), !config.once else { return }
    if config.list { return }  // not a per-element case: Benchmarks/callgrind skips it
    Watchdog.shared.enter(name)
    // Median of 3 alternating measurements each: the allocator's free lists make single runs jumpy.
    var b: [Double] = []
    var p: [Double] = []
    for rep in 0..<3 {
        if rep % 2 == 0 {
            b.append(await bridges())
            p.append(await peerValue())
        } else {
            p.append(await peerValue())
            b.append(await bridges())
        }
    }
    let row = Report.MemoryRow(name: name, bridges: median(b), peer: median(p), peerName: peer, note: note)
    Report.shared.memory.append(row)
    print("  \(name): bridges \(fmt(row.bridges)) B, \(peer) \(fmt(row.peer)) B  (\(note))")
}

@MainActor
func runMemory(_ config: Config) async {
    let stride = MemoryLayout<Int>.stride
    for k in [1_000, 100_000] {
        await recordMemory(
            "memory.buffered-element.k\(k)", peer: "AsyncStream",
            note: "per buffered Int (stride \(stride)); target ≤ \(fmt(1.5 * Double(stride))) B",
            config: config,
            bridges: { await bridgesBytesPerBufferedElement(k: k) },
            peerValue: { asyncStreamBytesPerBufferedElement(k: k) }
        )
    }
    let k = config.n(10_000, quick: 2_000)
    await recordMemory(
        "memory.created-stream", peer: "AsyncStream", note: "made, not iterated; target ≤ AsyncStream", config: config,
        bridges: { bridgesBytesPerCreatedStream(k: k) },
        peerValue: { asyncStreamBytesPerCreatedStream(k: k) }
    )
    await recordMemory(
        "memory.idle-stream", peer: "AsyncStream",
        note: "started, producer live, nothing buffered; target ≤ AsyncStream", config: config,
        bridges: { await bridgesBytesPerIdleStream(k: k) },
        peerValue: { await asyncStreamBytesPerIdleStream(k: k) }
    )
    await recordMemory(
        "memory.subscription.rendezvous", peer: ".values", note: "live subscription to a CurrentValueSubject",
        config: config,
        bridges: { await bridgesBytesPerSubscription(.rendezvous, k: k) },
        peerValue: { await valuesBytesPerSubscription(k: k) }
    )
    await recordMemory(
        "memory.subscription.unbounded", peer: ".values", note: "live subscription to a CurrentValueSubject",
        config: config,
        bridges: { await bridgesBytesPerSubscription(.unbounded, k: k) },
        peerValue: { await valuesBytesPerSubscription(k: k) }
    )
}
