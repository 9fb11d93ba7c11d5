// Case 5: single-shot `withCallback` (with cancellation support) vs the hand-written bridge every
// codebase has: withTaskCancellationHandler + withCheckedThrowingContinuation + a lock-guarded box
// that resumes exactly once and forwards cancellation to the legacy call.

import Bridges
import Dispatch
import Foundation

/// The hand-written peer, as careful as users write it: exactly-once resume, cancellation that
/// resumes at once and cancels the legacy call, also when the task was cancelled before start.
final class HandWrittenBridge<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: every mutable field is read and written only while `lock` is held.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Value, any Error>?
    private var cancelled = false
    private var cancel: (@Sendable () -> Void)?

    func start(_ continuation: CheckedContinuation<Value, any Error>) -> Bool {
        lock.lock()
        if cancelled {
            lock.unlock()
            continuation.resume(throwing: CancellationError())
            return false
        }
        self.continuation = continuation
        lock.unlock()
        return true
    }

    func setCancel(_ action: @escaping @Sendable () -> Void) {
        lock.lock()
        if cancelled {
            lock.unlock()
            action()
            return
        }
        cancel = action
        lock.unlock()
    }

    func resume(_ value: Value) {
        lock.lock()
        let c = continuation
        continuation = nil
        cancel = nil
        lock.unlock()
        c?.resume(returning: value)
    }

    func cancelNow() {
        lock.lock()
        cancelled = true
        let c = continuation
        continuation = nil
        let action = cancel
        cancel = nil
        lock.unlock()
        action?()
        c?.resume(throwing: CancellationError())
    }
}

@inline(never)
func handWrittenCallback<Value: Sendable>(
    _ body: (_ done: @escaping @Sendable (Value) -> Void) -> (@Sendable () -> Void)
) async throws -> Value {
    let box = HandWrittenBridge<Value>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            guard box.start(continuation) else { return }
            let cancel = body { box.resume($0) }
            box.setCancel(cancel)
        }
    } onCancel: {
        box.cancelNow()
    }
}

@MainActor
func runSingleShot(_ config: Config) async {
    let n = config.n(200_000, quick: 30_000)
    let queueN = config.n(20_000, quick: 3_000)   // a queue hop costs ~10–20 µs: fewer calls
    let queue = DispatchQueue(label: "bench.callback")

    // Runs the loop off the main actor (a plain nonisolated async function), as most callers do.
    @Sendable func bridges(onQueue: Bool) async throws -> Sample {
        let n = onQueue ? queueN : n
        let (sum, ns) = try await timed { () async throws -> Int in
            var sum = 0
            for i in 0..<n {
                sum &+= try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                    if onQueue { queue.async { done(.success(i)) } } else { done(.success(i)) }
                    return Cancellation {}
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
            for i in 0..<n {
                sum &+= try await handWrittenCallback { (done: @escaping @Sendable (Int) -> Void) in
                    if onQueue { queue.async { done(i) } } else { done(i) }
                    return {}
                }
            }
            return sum
        }
        try expectLossless("single-shot peer", sent: n, delivered: n, sum: sum)
        return Sample(nanoseconds: ns, sent: n, delivered: n)
    }
    await compare("single-shot.sync", peer: "hand-written", config: config,
                  bridges: { try await detachedRun { try await bridges(onQueue: false) } },
                  peer: { try await detachedRun { try await peer(onQueue: false) } })
    await compare("single-shot.queue", peer: "hand-written", config: config,
                  bridges: { try await detachedRun { try await bridges(onQueue: true) } },
                  peer: { try await detachedRun { try await peer(onQueue: true) } })
}

/// Runs `body` in a detached task (off the main actor) and waits for it.
func detachedRun<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await Task.detached { try await body() }.value
}
