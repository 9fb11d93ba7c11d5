import Bridges
import Dispatch
import TestSupport
import Testing

/// Racing pairs on real threads: bounded iterations, exact counts, no timing assumptions.
@Suite("withCallback: race stress", .timeLimit(.minutes(3)))
struct WithCallbackStressTests {
    static let iterations = 10_000

    @Test func callbackOnOneThread_versusCancellationOnAnother_resumesExactlyOnce() async throws {
        var completed = 0
        var cancelled = 0
        let tokenRuns = Collected<Void>()
        for iteration in 0..<Self.iterations {
            let api = LegacyAPI<@Sendable (Result<Int, Never>) -> Void>()
            let runsBefore = tokenRuns.count
            let task = Task {
                try await withCallback { done in
                    _ = api.start(done)
                    return Cancellation { tokenRuns.append(()) }
                }
            }
            await api.started.wait()
            // The callback and the cancellation start at the same moment on two threads.
            DispatchQueue.concurrentPerform(iterations: 2) { side in
                if side == 0 { api.stored(.success(iteration)) } else { task.cancel() }
            }
            switch await task.result {
            case .success(let value):
                #expect(value == iteration)
                completed += 1
                #expect(tokenRuns.count == runsBefore, "a completed call must not be cancelled")
            case .failure(let error):
                #expect(error is CancellationError)
                cancelled += 1
                #expect(tokenRuns.count == runsBefore + 1, "a cancelled call runs its token exactly once")
            }
        }
        #expect(completed + cancelled == Self.iterations)
        #expect(tokenRuns.count == cancelled)
        print("callback vs cancel: \(completed) completed, \(cancelled) cancelled of \(Self.iterations)")
    }

    @Test func twoCallbacksRacing_resumeOnce_andReportTheOtherOnce() async throws {
        let queue = DispatchQueue(label: "legacy", attributes: .concurrent)
        let diagnostics = Collected<BridgeDiagnostic>()
        var firsts = [0, 0]
        try await Diagnostics.withHandler({ diagnostics.append($0) }) {
            for _ in 0..<Self.iterations {
                let both = DispatchGroup()
                let value = try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                    both.enter()
                    both.enter()
                    queue.async {
                        done(.success(0))
                        both.leave()
                    }
                    queue.async {
                        done(.success(1))
                        both.leave()
                    }
                }
                firsts[value] += 1
                await withCheckedContinuation { c in both.notify(queue: queue) { c.resume() } }
            }
        }
        #expect(firsts[0] + firsts[1] == Self.iterations)
        #expect(diagnostics.count == Self.iterations)
        #expect(diagnostics.values.allSatisfy { $0.kind == .callbackCalledTwice })
    }

    @Test func dropVersusCancellation_resumesExactlyOnce() async throws {
        var dropped = 0
        var cancelled = 0
        for _ in 0..<Self.iterations {
            let api = LegacyAPI<@Sendable (Result<Int, Never>) -> Void>()
            let task = Task {
                try await Diagnostics.withHandler({ _ in }) {
                    try await withCallback { done in _ = api.start(done) }
                }
            }
            await api.started.wait()
            // The legacy API releases the handler while the task is being cancelled.
            DispatchQueue.concurrentPerform(iterations: 2) { side in
                if side == 0 { api.drop() } else { task.cancel() }
            }
            switch await task.result {
            case .success: Issue.record("nothing calls back, so nothing can succeed")
            case .failure(let error as BridgeError) where error == .callbackDropped: dropped += 1
            case .failure(let error):
                #expect(error is CancellationError)
                cancelled += 1
            }
        }
        #expect(dropped + cancelled == Self.iterations)
        print("drop vs cancel: \(dropped) dropped, \(cancelled) cancelled of \(Self.iterations)")
    }
}
