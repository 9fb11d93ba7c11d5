import Bridges
import Dispatch
import Testing

/// A legacy API in the shapes Bridges adapts. It keeps the handler until the test decides what
/// to do with it: call it (once, twice), or drop it.
final class LegacyAPI<Handler: Sendable>: Sendable {
    private let lock = NSLockish()
    nonisolated(unsafe) private var handler: Handler?  // guarded by `lock`
    let started = Signal()
    let cancelled = Collected<Void>()

    /// Starts a call: keeps the handler and returns a token that records cancellation.
    func start(_ handler: Handler) -> Cancellation {
        lock.withLock { self.handler = handler }
        started.open()
        return Cancellation { [cancelled] in cancelled.append(()) }
    }

    /// The stored handler (still stored: call it as many times as the test likes).
    var stored: Handler { lock.withLock { handler! } }

    /// Releases the handler without calling it.
    func drop() { lock.withLock { handler = nil } }
}

/// Captures every diagnostic reported by bridges created inside `body`.
func capturingDiagnostics<R>(_ body: () async throws -> R) async rethrows -> (R, [BridgeDiagnostic]) {
    let diagnostics = Collected<BridgeDiagnostic>()
    let result = try await Diagnostics.withHandler({ diagnostics.append($0) }, operation: body)
    return (result, diagnostics.values)
}

func failToStart(code: Int) throws { throw TestError(code: code) }

@Suite("withCallback: shapes", .timeLimit(.minutes(3)))
struct WithCallbackShapeTests {
    // MARK: - Result<T, E>

    @Test func resultShape_whenSucceeds_returnsValue() async throws {
        let value = try await withCallback { (done: @escaping @Sendable (Result<Int, TestError>) -> Void) in
            done(.success(1))
        }
        #expect(value == 1)
    }

    @Test func resultShape_whenFails_throwsTheLegacyErrorAsIs() async {
        await #expect(throws: TestError(code: 7)) {
            try await withCallback { (done: @escaping @Sendable (Result<Int, TestError>) -> Void) in
                done(.failure(TestError(code: 7)))
            }
        }
    }

    @Test func resultShape_whenCalledLaterOnAnotherThread_returnsValue() async throws {
        let value = try await withCallback { (done: @escaping @Sendable (Result<String, any Error>) -> Void) in
            DispatchQueue.global().async { done(.success("later")) }
        }
        #expect(value == "later")
    }

    // MARK: - (T?, Error?)

    @Test func valueOrError_whenValue_returnsIt() async throws {
        let value: Int = try await withCallback { done in done(3, nil) }
        #expect(value == 3)
    }

    @Test func valueOrError_whenError_throwsIt_evenWithAValue() async {
        await #expect(throws: TestError(code: 1)) {
            let _: Int = try await withCallback { done in done(3, TestError(code: 1)) }
        }
    }

    @Test func valueOrError_whenNeither_throwsMissingValueAndReports() async throws {
        let (error, diagnostics) = await capturingDiagnostics { () async -> (any Error)? in
            do {
                let _: Int = try await withCallback { done in done(nil, nil) }
                return nil
            } catch { return error }
        }
        #expect(error as? BridgeError == .missingValueAndError)
        #expect(diagnostics.map(\.kind) == [.callbackWithoutValueOrError])
        #expect(diagnostics.first?.fileID == #fileID)
    }

    // MARK: - (T)

    @Test func valueShape_returnsValue() async throws {
        let value = try await withCallback { (done: @escaping @Sendable (String) -> Void) in done("v") }
        #expect(value == "v")
    }

    // MARK: - (Error?)

    @Test func errorShape_whenNil_succeeds() async throws {
        try await withCallback { (done: @escaping @Sendable ((any Error)?) -> Void) in done(nil) }
    }

    @Test func errorShape_whenError_throwsIt() async {
        await #expect(throws: TestError(code: 2)) {
            try await withCallback { (done: @escaping @Sendable ((any Error)?) -> Void) in done(TestError(code: 2)) }
        }
    }

    // MARK: - ()

    @Test func voidShape_returnsWhenCalled() async throws {
        let api = LegacyAPI<@Sendable () -> Void>()
        async let finished: Void = withCallback { done in _ = api.start(done) }
        await api.started.wait()
        api.stored()
        try await finished
    }

    // MARK: - Body

    @Test func body_whenItThrows_rethrowsAndLateCallbackGoesToOnLateResult() async throws {
        let late = Collected<Result<Int, any Error>>()
        let api = LegacyAPI<@Sendable (Result<Int, any Error>) -> Void>()
        await #expect(throws: TestError(code: 9)) {
            try await withCallback(onLateResult: { late.append($0) }) { done in
                _ = api.start(done)
                try failToStart(code: 9)  // e.g. a request that can't be built after registering
            }
        }
        api.stored(.success(1))
        #expect(late.count == 1)
    }

    @Test func body_runsInTheCallersIsolation() async throws {
        @MainActor final class Screen { var title = "" }
        let screen = Screen()
        let value = try await { @MainActor in
            try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                screen.title = "loading"  // main-actor state touched synchronously in the body
                done(.success(1))
            }
        }()
        #expect(value == 1)
        #expect(await screen.title == "loading")
    }
}

@Suite("withCallback: exactly once and dropped callbacks", .timeLimit(.minutes(3)))
struct WithCallbackMisuseTests {
    @Test func secondCall_isIgnored_andReportedOnce_forEveryShape() async throws {
        let (values, diagnostics) = try await capturingDiagnostics {
            let a = try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                done(.success(1)); done(.success(2)); done(.success(3))
            }
            let b: Int = try await withCallback { done in done(1, nil); done(2, nil) }
            let c = try await withCallback { (done: @escaping @Sendable (Int) -> Void) in done(1); done(2) }
            try await withCallback { (done: @escaping @Sendable ((any Error)?) -> Void) in done(nil); done(TestError(code: 1)) }
            try await withCallback { (done: @escaping @Sendable () -> Void) in done(); done() }
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
            try await withCallback { done in _ = api.start(done); done(.success(1)) }
        }
        #expect(value == 1)
        #expect(diagnostics.isEmpty)
        let reported = Signal()
        // The bridge reports to the handler in effect where it was created, even from another thread.
        let late = Collected<BridgeDiagnostic>()
        try await Diagnostics.withHandler({ late.append($0); reported.open() }) {
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
                do { try await work(); errors.append(nil) } catch { errors.append(error as? BridgeError) }
            }
            await capture { _ = try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in _ = done } }
            await capture { let _: Int = try await withCallback { (done: @escaping @Sendable (Int?, (any Error)?) -> Void) in _ = done } }
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

@Suite("withCallback: cancellation and timeouts", .timeLimit(.minutes(3)))
struct WithCallbackCancellationTests {
    /// A legacy operation that keeps its completion handler after calling it (many do), and a
    /// token that captures that operation: operation → `done` → bridge → token → operation.
    /// Once the callback came the bridge lets go of the token, so the cycle ends with the call.
    @Test func tokenCapturingWhatHoldsDone_isReleasedOnceTheCallbackCame() async throws {
        final class KeepsItsHandler: @unchecked Sendable {  // written once before the thread starts
            var completion: (@Sendable (Result<Int, Never>) -> Void)?
            let cancels = Counter()
        }
        let operation = Weak<KeepsItsHandler>()
        let handedOver = LockedBox<KeepsItsHandler?>(nil)
        let calledBack = Signal()
        let value = try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
            let legacy = KeepsItsHandler()
            legacy.completion = done
            operation.object = legacy
            handedOver.set(legacy)
            DispatchQueue.global().async {
                do {
                    let legacy = handedOver.take()!
                    legacy.completion?(.success(7))
                }  // the legacy queue's own reference ends here
                calledBack.open()
            }
            Cancellation { legacy.cancels.increment() }
        }
        #expect(value == 7)
        await calledBack.wait()
        #expect(operation.object == nil, "the bridge kept the token, the token the operation, the operation the bridge: leaked")
    }

    @Test func cancelledBeforeStart_neverRunsTheBody() async {
        let ran = Collected<Void>()
        let start = Signal()
        let task = Task {
            await start.wait()
            return try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                ran.append(())
                return Cancellation {}
            }
        }
        task.cancel()
        start.open()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(ran.count == 0)
    }

    @Test func cancelledWhileWaiting_resumesAtOnce_runsTheTokenOnce_andDeliversTheLateResult() async throws {
        let api = LegacyAPI<@Sendable (Result<Int, any Error>) -> Void>()
        let late = Collected<Int>()
        let task = Task {
            try await withCallback(onLateResult: { late.append((try? $0.get()) ?? -1) }) { done in api.start(done) }
        }
        await api.started.wait()
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(api.cancelled.count == 1)
        task.cancel()
        #expect(api.cancelled.count == 1)
        // The legacy API answers late: the result is handed over (e.g. to close a file), not lost.
        let (_, diagnostics) = await capturingDiagnostics { api.stored(.success(41)) }
        #expect(late.values == [41])
        #expect(diagnostics.isEmpty)
    }

    @Test func cancelledWhileTheBodyRuns_runsTheTokenWhenTheBodyReturns() async throws {
        let tokenRuns = Collected<Void>()
        let api = LegacyAPI<@Sendable (Result<Int, any Error>) -> Void>()
        let task = Task {
            try await withCallback { done in
                _ = api.start(done)
                withUnsafeCurrentTask { $0?.cancel() }  // cancelled mid-body
                #expect(tokenRuns.count == 0)           // the token does not exist yet
                return Cancellation { tokenRuns.append(()) }
            }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(tokenRuns.count == 1)
    }

    @Test func cancelledAfterCompletion_doesNotRunTheToken() async throws {
        let tokenRuns = Collected<Void>()
        let task = Task {
            try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                done(.success(1))
                return Cancellation { tokenRuns.append(()) }
            }
        }
        let value = try await task.value
        task.cancel()
        #expect(value == 1)
        #expect(tokenRuns.count == 0)
    }

    @Test func droppedAfterCancellation_isNotReported() async throws {
        let api = LegacyAPI<@Sendable (Result<Int, any Error>) -> Void>()
        let diagnostics = Collected<BridgeDiagnostic>()
        let task = Task {
            try await Diagnostics.withHandler({ diagnostics.append($0) }) {
                try await withCallback { done in api.start(done) }
            }
        }
        await api.started.wait()
        task.cancel()
        _ = await task.result
        api.drop()  // many APIs release their handler on cancel without calling it: fine
        #expect(diagnostics.values.isEmpty)
    }

    @Test func timeout_throwsTimedOut_cancelsTheLegacyCall_andHandsOverTheLateResult() async throws {
        let api = LegacyAPI<@Sendable (Result<Int, any Error>) -> Void>()
        let elapse = Signal()
        let late = Collected<Int>()
        let task = Task {
            try await withCallback(
                timeout: .custom("test timeout") { await elapse.wait() },
                onLateResult: { late.append((try? $0.get()) ?? -1) }
            ) { done in api.start(done) }
        }
        await api.started.wait()
        elapse.open()
        await #expect(throws: BridgeError.timedOut) { try await task.value }
        #expect(api.cancelled.count == 1)
        api.stored(.success(8))
        #expect(late.values == [8])
    }

    /// The clock is running (its Task started and is sleeping) when the legacy API calls back:
    /// the task returns the value, and the timeout's Task is cancelled rather than left to sleep.
    @Test func timeout_whenTheCallbackWinsWhileTheClockRuns_isCancelledAndNeverFires() async throws {
        let api = LegacyAPI<@Sendable (Result<Int, Never>) -> Void>()
        let sleeping = Signal(), sleeperCancelled = Signal()
        let task = Task {
            try await withCallback(
                timeout: .custom("never") {
                    sleeping.open()
                    await withTaskCancellationHandler {
                        await Signal().wait()  // would sleep forever
                    } onCancel: { sleeperCancelled.open() }
                    throw CancellationError()
                }
            ) { done in api.start(done) }
        }
        await sleeping.wait()
        api.stored(.success(4))
        #expect(try await task.value == 4)
        await sleeperCancelled.wait()  // the timeout's task was cancelled, not leaked
        #expect(api.cancelled.count == 0, "a completed call is not cancelled")
    }

    /// A callback that comes before the frame suspends (here: inside the body) ends the bridge
    /// before there is anything to time: the clock's Task is never started, and its closure and
    /// captures are released with the call.
    @Test func timeout_whenTheCallbackComesBeforeTheSuspension_neverStartsTheClock() async throws {
        let clockRuns = Collected<Void>()
        let clockReleased = Signal()
        let value: Int = try await {
            let canary = Canary(released: clockReleased)
            return try await withCallback(
                timeout: .custom("never") { _ = canary; clockRuns.append(()); try await suspendUntilCancelled() }
            ) { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in done(.success(4)) }
        }()
        #expect(value == 4)
        await clockReleased.wait()
        #expect(clockRuns.count == 0, "no clock runs for a call that ended before it suspended")
    }

    /// The callback races the frame's suspension from another thread: whichever is first, the
    /// value is returned, and the clock is either never started or started and cancelled; in both
    /// cases what it captured is released. (This test used to wait for the clock's cancellation
    /// unconditionally and hung, without a time limit, whenever the callback won before the clock
    /// started.)
    @Test(.timeLimit(.minutes(1)))
    func timeout_whenTheCallbackRacesTheSuspension_theClockNeverOutlivesTheCall() async throws {
        var started = 0
        for iteration in 0..<1_000 {
            let clockStarted = Collected<Void>()
            let clockReleased = Signal(), sleeperCancelled = Signal()
            let value: Int = try await {
                let canary = Canary(released: clockReleased)
                return try await withCallback(
                    timeout: .custom("never") {
                        _ = canary
                        clockStarted.append(())
                        await withTaskCancellationHandler {
                            await Signal().wait()
                        } onCancel: { sleeperCancelled.open() }
                        throw CancellationError()
                    }
                ) { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                    DispatchQueue.global().async { done(.success(iteration)) }
                }
            }()
            #expect(value == iteration)
            await clockReleased.wait()  // the clock's closure is gone, whether or not it ran
            if clockStarted.count > 0 {
                started += 1
                await sleeperCancelled.wait()
            }
        }
        print("callback vs the clock's start: the clock started (and was cancelled) in \(started) of 1000 calls")
    }
}

@Suite("withCallback: lifetimes", .timeLimit(.minutes(3)))
struct WithCallbackLifetimeTests {
    @Test func legacyObjectAndCallbackCaptures_areReleasedAfterCompletion() async throws {
        final class Request: Sendable { func cancel() {} }
        weak var weakRequest: Request?
        let callbackCaptureReleased = Signal()
        let value = try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
            let request = Request()
            weakRequest = request
            let canary = Canary(released: callbackCaptureReleased)
            DispatchQueue.global().async { _ = canary; done(.success(1)) }
            return Cancellation { request.cancel() }
        }
        #expect(value == 1)
        await callbackCaptureReleased.wait()
        #expect(weakRequest == nil, "the bridge must not keep the legacy call's token after completion")
    }

    @Test func legacyObject_isReleasedAfterCancellation() async throws {
        final class Request: Sendable { func cancel() {} }
        let weakRequest = Weak<Request>()
        let api = LegacyAPI<@Sendable (Result<Int, any Error>) -> Void>()
        let task = Task {
            try await withCallback { done in
                _ = api.start(done)
                let request = Request()
                weakRequest.object = request
                return Cancellation { request.cancel() }
            }
        }
        await api.started.wait()
        task.cancel()
        _ = await task.result
        api.drop()
        #expect(weakRequest.object == nil)
    }
}

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

    /// The builder takes `if`: a check before the legacy call no longer switches to the
    /// non-cancellable fallback, so the trailing token is kept and cancelling reaches the call.
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
                _ = try await withTypedCallback { (done: @escaping @Sendable (Result<Int, TestError>) -> Void) in _ = done }
                return nil
            } catch { return error }
        }
        #expect(dropped == .bridge(.callbackDropped))
    }
}
