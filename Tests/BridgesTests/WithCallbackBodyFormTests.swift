import Bridges
import Dispatch
import TestSupport
import Testing

@Suite("withCallback: body forms and typed failures", .timeLimit(.minutes(3)))
struct WithCallbackBodyFormTests {
    @Test func bodyEndingInACancellationExpression_isCancellable() async throws {
        let api = LegacyAPI<@Sendable (Result<Int, any Error>) -> Void>()
        let task = Task { try await withCallback { done in api.start(done) } }  // start(...) -> Cancellation
        await api.started.wait()
        task.cancel()
        _ = await task.result
        #expect(api.cancelled.count == 1)
    }

    /// `onLateResult` written after the body, untyped and of several statements (the shape that
    /// failed to compile written before the body): `late` takes the type the body's `done` fixed,
    /// and the result that arrives after cancellation reaches it.
    @Test func onLateResult_afterTheBody_untyped_compilesAndReceivesTheLateResult() async throws {
        let lateValues = Collected<Int>()
        let api = LegacyAPI<@Sendable (Result<Int, any Error>) -> Void>()
        let task = Task {
            try await withCallback { done in
                let request = api.start(done)
                return Cancellation { request.cancel() }
            } onLateResult: { late in
                if case .success(let value) = late { lateValues.append(value) }
            }
        }
        await api.started.wait()
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(api.cancelled.count == 1)
        api.stored(.success(5))
        #expect(lateValues.values == [5])
    }

    /// The `(Error?)` shape keeps throwing the legacy error with a trailing `onLateResult`: it
    /// is not taken for the `(T)` shape with `T == (any Error)?`.
    @Test func onLateResult_afterTheBody_errorShape_throwsTheLegacyError() async throws {
        let lateErrors = Collected<String>()
        let api = LegacyAPI<@Sendable ((any Error)?) -> Void>()
        let task = Task {
            try await withCallback { done in
                api.start(done)
            } onLateResult: { error in
                lateErrors.append(String(describing: error))
            }
        }
        await api.started.wait()
        api.stored(TestError(code: 3))
        await #expect(throws: TestError(code: 3)) { try await task.value }
        #expect(lateErrors.count == 0)
    }

    /// A body with `guard` is no builder body: it says what it returns, as the unavailable
    /// fallback's error message tells it to (.ci/check-builder-diagnostics.sh checks the error).
    @Test func bodyWithGuard_andExplicitReturn_compilesAndRuns() async throws {
        let url: String? = "ok"
        let value = try await withCallback { (done: @escaping @Sendable (Result<String, any Error>) -> Void) in
            guard let url else { throw TestError(code: 0) }
            done(.success(url))
            return nil
        }
        #expect(value == "ok")
    }

    /// The builder takes `if`: with a check before the legacy call, the body keeps its trailing
    /// token (it is not the non-cancellable overload), and cancelling reaches the call.
    @Test func bodyWithIf_keepsTheTrailingCancellation() async throws {
        let api = LegacyAPI<@Sendable (Result<Int, any Error>) -> Void>()
        let resets = Counter()
        let stale = true
        let task = Task {
            try await withCallback { done in
                if stale { resets.increment() }
                api.start(done)  // returns a Cancellation: the body's last expression
            }
        }
        await api.started.wait()
        task.cancel()
        _ = await task.result
        #expect(resets.value == 1)
        #expect(api.cancelled.count == 1, "the token after the `if` was kept")
    }

    /// `if`/`else` with the legacy call in each branch: the branch that ran gives the token.
    @Test func bodyWithIfElse_keepsTheTokenOfTheBranchThatRan() async throws {
        let primary = LegacyAPI<@Sendable (Result<Int, any Error>) -> Void>()
        let fallback = LegacyAPI<@Sendable (Result<Int, any Error>) -> Void>()
        let usePrimary = false
        let task = Task {
            try await withCallback { done in
                if usePrimary {
                    primary.start(done)
                } else {
                    fallback.start(done)
                }
            }
        }
        await fallback.started.wait()
        task.cancel()
        _ = await task.result
        #expect(fallback.cancelled.count == 1)
        #expect(primary.cancelled.count == 0)
    }

    @Test func typed_keepsTheLegacyErrorType() async {
        do throws(CallbackFailure<TestError>) {
            _ = try await withTypedCallback { (done: @escaping @Sendable (Result<Int, TestError>) -> Void) in
                done(.failure(TestError(code: 3)))
            }
            Issue.record("expected a throw")
        } catch .failure(let error) {
            #expect(error.code == 3)  // `error` is a TestError, no cast
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func typed_namesCancellationAndBridgeFailures() async {
        let api = LegacyAPI<@Sendable (Result<Int, TestError>) -> Void>()
        let task = Task { () async -> CallbackFailure<TestError>? in
            do throws(CallbackFailure<TestError>) {
                _ = try await withTypedCallback { done in api.start(done) }
                return nil
            } catch { return error }
        }
        await api.started.wait()
        task.cancel()
        #expect(await task.value == .cancelled)

        let dropped = await Diagnostics.withHandler({ _ in }) { () async -> CallbackFailure<TestError>? in
            do throws(CallbackFailure<TestError>) {
                _ = try await withTypedCallback { (done: @escaping @Sendable (Result<Int, TestError>) -> Void) in
                    _ = done
                }
                return nil
            } catch { return error }
        }
        #expect(dropped == .bridge(.callbackDropped))
    }
}
