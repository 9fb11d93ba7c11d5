// Case 5: single-shot `withCallback` (with cancellation support) vs the *lean* hand-written
// bridge: withTaskCancellationHandler + withUnsafeThrowingContinuation + one lock-guarded box
// (the standard library's `Mutex`, stored in the box's own allocation) that resumes exactly once
// and forwards cancellation to the legacy call. One allocation per call; the leanest correct
// peer. (Until issue 16's third round the box held a `pthread_mutex_t`, ≈ 57 Ir per lock pair
// more on Linux: Bridges' own four-byte lock then made the comparison flattering.)

import Bridges
import Dispatch
import Foundation
import Synchronization

/// The lean peer's state, guarded by the mutex stored in the same allocation. Written for the
/// one value type the benchmark bridges (`Int`), as a hand-written bridge is written for its
/// call's type: a generic class holding a `Mutex` pays a generic metadata look-up (≈ 500 Ir)
/// per allocation, which would flatter Bridges.
typealias LeanValue = Int

struct LeanBridgeState: Sendable {
    var continuation: UnsafeContinuation<LeanValue, any Error>?
    var cancelled = false
    var cancel: (@Sendable () -> Void)?
}

/// The lean hand-written bridge: state and lock in one allocation, exactly-once resume,
/// cancellation that resumes at once and cancels the legacy call, also when the task was
/// cancelled before start.
final class LeanBridge: Sendable {
    let state = Mutex(LeanBridgeState())

    static func make() -> LeanBridge { LeanBridge() }

    @inline(__always)
    func locked<R>(_ body: (inout LeanBridgeState) -> R) -> R {
        state.withLock { body(&$0) }
    }

    func start(_ continuation: UnsafeContinuation<LeanValue, any Error>) -> Bool {
        let cancelled = locked { state in
            if state.cancelled { return true }
            state.continuation = continuation
            return false
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        return !cancelled
    }

    func setCancel(_ action: @escaping @Sendable () -> Void) {
        let runNow = locked { state in
            if state.cancelled { return true }
            state.cancel = action
            return false
        }
        if runNow { action() }
    }

    func resume(_ value: LeanValue) {
        let c = locked { state in
            let c = state.continuation
            state.continuation = nil
            state.cancel = nil
            return c
        }
        c?.resume(returning: value)
    }

    func cancelNow() {
        let (c, action) = locked { state in
            state.cancelled = true
            let c = state.continuation
            state.continuation = nil
            let action = state.cancel
            state.cancel = nil
            return (c, action)
        }
        action?()
        c?.resume(throwing: CancellationError())
    }
}

@inline(never)
func leanCallback(
    _ body: (_ done: @escaping @Sendable (LeanValue) -> Void) -> (@Sendable () -> Void)
) async throws -> LeanValue {
    let bridge = LeanBridge.make()
    return try await withTaskCancellationHandler {
        try await withUnsafeThrowingContinuation { continuation in
            guard bridge.start(continuation) else { return }
            let cancel = body { bridge.resume($0) }
            bridge.setCancel(cancel)
        }
    } onCancel: {
        bridge.cancelNow()
    }
}

@MainActor
func runSingleShot(_ config: Config) async {
    let n = config.n(200_000, quick: 30_000)
    let queueN = config.n(20_000, quick: 3_000)  // a queue hop costs ~10–20 µs: fewer calls
    let queue = DispatchQueue(label: "bench.callback")

    // Runs the loop off the main actor (a plain nonisolated async function), as most callers do.
    @Sendable func bridges(onQueue: Bool) async throws -> Sample {
        let n = onQueue ? queueN : n
        let (sum, ns) = try await timed { () async throws -> Int in
            var sum = 0
            // Two loops, not one `if` in the body: the queue's closure context would otherwise be
            // allocated on the synchronous path too and blur the per-call malloc count.
            if onQueue {
                for i in 0..<n {
                    sum &+= try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                        queue.async { done(.success(i)) }
                        return Cancellation {}
                    }
                }
            } else {
                for i in 0..<n {
                    sum &+= try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                        done(.success(i))
                        return Cancellation {}
                    }
                }
            }
            return sum
        }
        try expectLossless("single-shot bridges", sent: n, delivered: n, sum: sum)
        return Sample(nanoseconds: ns, sent: n, delivered: n)
    }
    @Sendable func peer(onQueue: Bool) async throws -> Sample {
        let n = onQueue ? queueN : n
        let (sum, ns) = try await timed { () async throws -> Int in
            var sum = 0
            if onQueue {
                for i in 0..<n {
                    sum &+= try await leanCallback { (done: @escaping @Sendable (Int) -> Void) in
                        queue.async { done(i) }
                        return {}
                    }
                }
            } else {
                for i in 0..<n {
                    sum &+= try await leanCallback { (done: @escaping @Sendable (Int) -> Void) in
                        done(i)
                        return {}
                    }
                }
            }
            return sum
        }
        try expectLossless("single-shot peer", sent: n, delivered: n, sum: sum)
        return Sample(nanoseconds: ns, sent: n, delivered: n)
    }
    await compare(
        "single-shot.sync", peer: "lean hand-written", config: config,
        bridges: { try await detachedRun { try await bridges(onQueue: false) } },
        peer: { try await detachedRun { try await peer(onQueue: false) } })
    await compare(
        "single-shot.queue", peer: "lean hand-written", config: config,
        bridges: { try await detachedRun { try await bridges(onQueue: true) } },
        peer: { try await detachedRun { try await peer(onQueue: true) } })
}

/// Runs `body` in a detached task (off the main actor) and waits for it.
func detachedRun<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await Task.detached { try await body() }.value
}
