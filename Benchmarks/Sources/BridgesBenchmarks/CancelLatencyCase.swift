// Case: the time from `Task.cancel()` to a stream's nonisolated teardown, the consumer waiting in
// `next()`, with the cooperative pool idle and with it saturated (four tasks per core spin until
// the teardown ran, so the consumer's task waits for a thread; spinning, not blocked, so that
// Dispatch does not add threads for them). Bridges decides the end in the cancellation handler and runs the
// teardown on its teardown queue, which gets a thread of its own; the peer, `AsyncStream`, runs
// `onTermination` inside the cancellation handler itself (and so would deadlock a teardown that
// waits for the thread resuming the task, which Bridges' never runs there).
//
// Printed as `LATENCY <case> bridges=<µs> peer=<µs>` (median and worst of the rounds); the
// teardown is waited for at most 10 s per round, so a teardown that waited for the pool shows as
// ≥ 10 000 000 µs rather than hanging the run.

import Bridges
import Dispatch
import Foundation

/// Runs the cancel-to-teardown rounds and prints their medians.
@MainActor
func runCancelLatency(_ config: Config) async {
    for saturated in [false, true] {
        let name = saturated ? "cancel.teardown.saturated" : "cancel.teardown.idle"
        guard config.wants(name), config.side == .both, !config.once else { continue }
        if config.list {
            print("CASE \(name)")
            continue
        }
        let rounds = config.quick ? 10 : 100
        var bridges: [Double] = []
        var peer: [Double] = []
        for _ in 0..<rounds {
            bridges.append(await cancelToTeardown(saturated: saturated, makeStream: bridgesStream))
            peer.append(await cancelToTeardown(saturated: saturated, makeStream: asyncStream))
        }
        let (b, p) = (bridges.sorted(), peer.sorted())
        print(
            "LATENCY \(name) bridges=\(micro(b[b.count / 2])) peer=\(micro(p[p.count / 2])) "
                + "worst: bridges=\(micro(b.last!)) peer=\(micro(p.last!)) (µs, median of \(rounds))")
        if b.last! >= 10 {
            Report.shared.failures.append("\(name): a teardown waited 10 s for the cancelled consumer's task")
        }
    }
}

private func micro(_ seconds: Double) -> String { String(format: "%.1f", seconds * 1_000_000) }

/// A stream whose teardown signals `tornDown`, and a way to make the consumer wait in `next()`.
private typealias MakeStream =
    @Sendable (_ tornDown: DispatchSemaphore, _ waiting: DispatchSemaphore) -> Task<
        Void, Never
    >

private let bridgesStream: MakeStream = { tornDown, waiting in
    let stream = CallbackStream<Int, Never> { sink in
        _ = sink.yield(0)
        return Cancellation { withExtendedLifetime(sink) { _ = tornDown.signal() } }
    }
    return Task.detached {  // at the spinners' priority, so it waits behind them in the pool
        for await _ in stream { waiting.signal() }
    }
}

private let asyncStream: MakeStream = { tornDown, waiting in
    let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
    continuation.onTermination = { _ in tornDown.signal() }
    continuation.yield(0)
    return Task.detached {  // at the spinners' priority, so it waits behind them in the pool
        for await _ in stream { waiting.signal() }
    }
}

/// One round: the consumer takes its element and waits in `next()`; then, with the pool idle or
/// with every thread of it blocked, a thread of its own cancels the consumer's task and times
/// until the teardown ran.
private func cancelToTeardown(saturated: Bool, makeStream: MakeStream) async -> Double {
    let tornDown = DispatchSemaphore(value: 0)
    let received = DispatchSemaphore(value: 0)
    let consumer = makeStream(tornDown, received)
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        Thread {
            received.wait()
            done.resume()
        }.start()
    }
    let width = saturated ? 4 * ProcessInfo.processInfo.activeProcessorCount : 0
    let release = SpinFlag()
    let spinning = DispatchSemaphore(value: 0)
    let blockers = (0..<width).map { _ in
        Task.detached {
            spinning.signal()
            while !release.isSet {}
        }
    }
    let elapsed = await withCheckedContinuation { (done: CheckedContinuation<Double, Never>) in
        Thread {
            // The first spinners hold every thread of the pool; the rest wait in its queue.
            for _ in 0..<min(width, ProcessInfo.processInfo.activeProcessorCount) { spinning.wait() }
            usleep(2_000)  // the consumer, handed its element, parks in next() meanwhile
            let start = DispatchTime.now().uptimeNanoseconds
            consumer.cancel()
            let ran = tornDown.wait(timeout: .now() + 10) == .success
            let end = DispatchTime.now().uptimeNanoseconds
            release.set()
            done.resume(returning: ran ? Double(end - start) / 1e9 : 10)
        }.start()
    }
    for blocker in blockers { await blocker.value }
    await consumer.value
    return elapsed
}

/// A flag that spinning tasks read until the measuring thread sets it.
private final class SpinFlag: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value = false

    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }
}
