import Bridges
import Dispatch
import TestSupport
import Testing

@Suite("withCallback: exactly once and dropped callbacks", .timeLimit(.minutes(3)))
struct WithCallbackMisuseTests {
    @Test func secondCall_isIgnored_andReportedOnce_forEveryShape() async throws {
        let (values, diagnostics) = try await capturingDiagnostics {
            let a = try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                done(.success(1))
                done(.success(2))
                done(.success(3))
            }
            let b: Int = try await withCallback { done in
                done(1, nil)
                done(2, nil)
            }
            let c = try await withCallback { (done: @escaping @Sendable (Int) -> Void) in
                done(1)
                done(2)
            }
            try await withCallback { (done: @escaping @Sendable ((any Error)?) -> Void) in
                done(nil)
                done(TestError(code: 1))
            }
            try await withCallback { (done: @escaping @Sendable () -> Void) in
                done()
                done()
            }
            return [a, b, c]
        }
        #expect(values == [1, 1, 1])
        #expect(diagnostics.map(\.kind) == Array(repeating: .callbackCalledTwice, count: 5))
        #expect(diagnostics.map(\.occurrences) == [2, 1, 1, 1, 1])  // every extra call counted
        #expect(diagnostics.allSatisfy { $0.fileID == #fileID && $0.message.contains("called again") })
    }

    @Test func secondCall_fromAnotherThreadAfterCompletion_isReported() async throws {
        let api = LegacyAPI<@Sendable (Result<Int, Never>) -> Void>()
        let (value, diagnostics) = try await capturingDiagnostics {
            try await withCallback { done in
                _ = api.start(done)
                done(.success(1))
            }
        }
        #expect(value == 1)
        #expect(diagnostics.isEmpty)
        let reported = Signal()
        // The bridge reports to the handler in effect where it was created, even from another thread.
        let late = Collected<BridgeDiagnostic>()
        try await Diagnostics.withHandler({
            late.append($0)
            reported.open()
        }) {
            let again = try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                _ = api.start(done)
                done(.success(2))
            }
            #expect(again == 2)
        }
        DispatchQueue.global().async { api.stored(.success(3)) }
        await reported.wait()
        #expect(late.values.map(\.kind) == [.callbackCalledTwice])
    }

    @Test func droppedCallback_throwsCallbackDropped_andReportsOnce_forEveryShape() async throws {
        let (errors, diagnostics) = await capturingDiagnostics { () async -> [BridgeError?] in
            var errors: [BridgeError?] = []
            func capture(_ work: () async throws -> Void) async {
                do {
                    try await work()
                    errors.append(nil)
                } catch { errors.append(error as? BridgeError) }
            }
            await capture {
                _ = try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in _ = done }
            }
            await capture {
                let _: Int = try await withCallback { (done: @escaping @Sendable (Int?, (any Error)?) -> Void) in
                    _ = done
                }
            }
            await capture { _ = try await withCallback { (done: @escaping @Sendable (Int) -> Void) in _ = done } }
            await capture { try await withCallback { (done: @escaping @Sendable ((any Error)?) -> Void) in _ = done } }
            await capture { try await withCallback { (done: @escaping @Sendable () -> Void) in _ = done } }
            return errors
        }
        #expect(errors == Array(repeating: .callbackDropped, count: 5))
        #expect(diagnostics.map(\.kind) == Array(repeating: .callbackDropped, count: 5))
    }

    @Test func droppedCallback_laterOnAnotherThread_resumesTheTask() async throws {
        let api = LegacyAPI<@Sendable (Result<Int, any Error>) -> Void>()
        let task = Task {
            try await Diagnostics.withHandler({ _ in }) {
                try await withCallback { done in _ = api.start(done) }
            }
        }
        await api.started.wait()
        DispatchQueue.global().async { api.drop() }
        await #expect(throws: BridgeError.callbackDropped) { try await task.value }
    }

    @Test func callbackThenRelease_isNotADrop() async throws {
        let (value, diagnostics) = try await capturingDiagnostics {
            try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                DispatchQueue.global().async { done(.success(5)) }  // called, then released
            }
        }
        #expect(value == 5)
        #expect(diagnostics.isEmpty)
    }

    @Test func errorMatching_withBridgeErrorPatterns() async {
        do {
            try await Diagnostics.withHandler({ _ in }) {
                try await withCallback { (done: @escaping @Sendable () -> Void) in _ = done }
            }
            Issue.record("expected a throw")
        } catch BridgeError.callbackDropped {
            // matched through `~=`
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
