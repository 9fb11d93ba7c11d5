import Bridges
import Dispatch
import TestSupport
import Testing

/// The single-allocation bridge: one object is the state, the completion handler's context and
/// the witness that the handler was released. Once the body has returned, its strong references
/// are the handler's copies only (or, when none is left, the frame's); the awaiting frame, the
/// cancellation handler and the timeout's task reach the state through its address and keep the
/// memory valid with the runtime's unowned count. The body runs before the task hands over a
/// continuation, so a callback can land before, while or after the frame suspends.
///
/// These tests would fail if that were wrong: a frame holding a strong reference turns a drop
/// into a hang (time limit); a missing unowned count is a use after free (the CI runs every
/// `Stress` suite under AddressSanitizer, and the suite under ThreadSanitizer); a token or a
/// timeout left in the state when the last holder lets go leaks what they capture (the
/// release checks); a drop noticed twice or never breaks the exact counts.
@Suite("withCallback: single allocation, race stress", .timeLimit(.minutes(3)))
struct WithCallbackSingleAllocationStressTests {
    static let iterations = 10_000

    /// The legacy API releases the handler on another thread while the body returns its token
    /// and the task is being cancelled: the `deinit` (the drop) races with the frame's
    /// `bodyReturned` and with `onCancel`. Exactly one ending per call; the token runs exactly
    /// when cancellation won; the token, the handler's captures and `onLateResult` are released
    /// every time.
    @Test func dropWhileTheBodyReturns_versusCancellation_endsOnce_andReleasesEverything() async throws {
        var dropped = 0
        var cancelled = 0
        let tokenRuns = Collected<Void>()
        for _ in 0..<Self.iterations {
            let runsBefore = tokenRuns.count
            let tokenReleased = Signal()
            let lateHandlerReleased = Signal()
            let handlerCaptureReleased = Signal()
            let bodyRan = Signal()
            let task = Task {
                try await Diagnostics.withHandler({ _ in }) {
                    let lateCanary = Canary(released: lateHandlerReleased)
                    return try await withCallback(onLateResult: { (_: Result<Int, Never>) in _ = lateCanary }) { done in
                        let canary = Canary(released: handlerCaptureReleased)
                        let tokenCanary = Canary(released: tokenReleased)
                        // Released on another thread, possibly before the body has returned.
                        DispatchQueue.global().async {
                            _ = canary
                            _ = done
                        }
                        bodyRan.open()
                        return Cancellation {
                            _ = tokenCanary
                            tokenRuns.append(())
                        }
                    }
                }
            }
            await bodyRan.wait()
            task.cancel()
            switch await task.result {
            case .success: Issue.record("nothing calls back, so nothing can succeed")
            case .failure(let error as BridgeError) where error == .callbackDropped:
                dropped += 1
                #expect(tokenRuns.count == runsBefore, "a dropped call is not cancelled")
            case .failure(let error):
                #expect(error is CancellationError)
                cancelled += 1
                #expect(tokenRuns.count == runsBefore + 1, "a cancelled call runs its token exactly once")
            }
            await tokenReleased.wait()
            await handlerCaptureReleased.wait()
            await lateHandlerReleased.wait()
        }
        #expect(dropped + cancelled == Self.iterations)
        #expect(tokenRuns.count == cancelled)
        print("drop while the body returns vs cancel: \(dropped) dropped, \(cancelled) cancelled of \(Self.iterations)")
    }

    /// The callback and the cancellation race on two threads while the test holds the only
    /// copy of the handler; often the awaiting frame has let go of the bridge before the
    /// callback runs. The handler's own reference keeps the state valid: a late result goes to
    /// `onLateResult` exactly once (exactly when cancellation won), and once the test drops the
    /// handler, `onLateResult` and its captures are released.
    @Test func callbackAfterTheFrameLetGo_goesToOnLateResultOnce_andReleasesEverything() async throws {
        let late = Collected<Int>()
        var completed = 0
        var cancelled = 0
        for iteration in 0..<Self.iterations {
            let api = LegacyAPI<@Sendable (Result<Int, Never>) -> Void>()
            let lateHandlerReleased = Signal()
            let task = Task {
                let lateCanary = Canary(released: lateHandlerReleased)
                let onLateResult: @Sendable (Result<Int, Never>) -> Void = { result in
                    _ = lateCanary
                    if case .success(let value) = result { late.append(value) }
                }
                return try await withCallback(onLateResult: onLateResult) { done in
                    return api.start(done)
                }
            }
            await api.started.wait()
            do {
                let handler = api.stored
                api.drop()  // the test holds the only copy of the handler now
                DispatchQueue.concurrentPerform(iterations: 2) { side in
                    if side == 0 { task.cancel() } else { handler(.success(iteration)) }
                }
                switch await task.result {
                case .success(let value):
                    #expect(value == iteration)
                    completed += 1
                    #expect(late.values.last != iteration, "a completed call delivers nothing late")
                case .failure(let error):
                    #expect(error is CancellationError)
                    cancelled += 1
                    #expect(late.values.last == iteration, "the late result is delivered, once")
                }
            }  // the handler, the last reference to the bridge, is released here
            await lateHandlerReleased.wait()
        }
        #expect(completed + cancelled == Self.iterations)
        #expect(late.count == cancelled)
        print("late callback vs cancel: \(completed) completed, \(cancelled) cancelled of \(Self.iterations)")
    }

    /// A body that throws after dropping `done` throws its own error, never `callbackDropped`
    /// (the frame gives up its reference only once the body's outcome is recorded), in every
    /// build configuration.
    @Test func bodyThrowingAfterDroppingDone_throwsItsOwnError_andReportsNothing() async throws {
        let diagnostics = Collected<BridgeDiagnostic>()
        await Diagnostics.withHandler({ diagnostics.append($0) }) {
            for code in 0..<100 {
                await #expect(throws: TestError(code: code)) {
                    try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                        _ = done
                        try failWith(TestError(code: code))
                    }
                }
            }
        }
        #expect(diagnostics.values.isEmpty)
    }

    /// A legacy API that never keeps the handler: the frame's reference is the last, so the
    /// drop is noticed when the frame gives it up, after the body returned its token. The task
    /// throws `callbackDropped`, reported once per call, and the token is released without
    /// running.
    @Test func handlerNeverKept_throwsCallbackDropped_andReleasesTheTokenWithoutRunningIt() async throws {
        let diagnostics = Collected<BridgeDiagnostic>()
        let tokenRuns = Collected<Void>()
        await Diagnostics.withHandler({ diagnostics.append($0) }) {
            for _ in 0..<1_000 {
                let tokenReleased = Signal()
                await #expect(throws: BridgeError.callbackDropped) {
                    try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                        let tokenCanary = Canary(released: tokenReleased)
                        return Cancellation {
                            _ = tokenCanary
                            tokenRuns.append(())
                        }
                    }
                }
                await tokenReleased.wait()
            }
        }
        #expect(diagnostics.values.map(\.kind) == Array(repeating: .callbackDropped, count: 1_000))
        #expect(tokenRuns.count == 0)
    }

    /// The callback races the body's return on another thread: it can land while the body
    /// runs, between the body's return and the hand-over of the continuation, or after the task
    /// suspended. Every call returns its own value, exactly once; the token is never run; nothing
    /// is late and nothing is reported; the token is released every time.
    @Test func callbackRacingTheBodysReturn_returnsItsValueOnce_andNeverRunsTheToken() async throws {
        let tokenRuns = Collected<Void>()
        let late = Collected<Int>()
        let diagnostics = Collected<BridgeDiagnostic>()
        try await Diagnostics.withHandler({ diagnostics.append($0) }) {
            for iteration in 0..<Self.iterations {
                let tokenReleased = Signal()
                let value = try await withCallback(onLateResult: { (result: Result<Int, Never>) in
                    late.append(result.get())
                }) { done in
                    DispatchQueue.global().async { done(.success(iteration)) }
                    let tokenCanary = Canary(released: tokenReleased)
                    return Cancellation {
                        _ = tokenCanary
                        tokenRuns.append(())
                    }
                }
                #expect(value == iteration)
                await tokenReleased.wait()
            }
        }
        #expect(tokenRuns.count == 0)
        #expect(late.count == 0)
        #expect(diagnostics.values.isEmpty)
    }

    /// The legacy API calls back inside the body after the task was cancelled (mid-body): the
    /// body's outcome is looked at when it returns, so the task returns the result it already has
    /// (as it would had the cancellation come a moment later), the token is not run and nothing is
    /// late. Without a callback, the same cancellation runs the token (see
    /// `cancelledWhileTheBodyRuns_runsTheTokenWhenTheBodyReturns`).
    @Test func callbackInsideTheBody_afterTheTaskWasCancelled_returnsTheResult() async throws {
        let tokenRuns = Collected<Void>()
        let late = Collected<Int>()
        let task = Task {
            try await withCallback(onLateResult: { (result: Result<Int, Never>) in late.append(result.get()) }) {
                done in
                withUnsafeCurrentTask { $0?.cancel() }
                done(.success(7))
                return Cancellation { tokenRuns.append(()) }
            }
        }
        #expect(try await task.value == 7)
        #expect(tokenRuns.count == 0)
        #expect(late.count == 0)
    }
}

/// Throws `error`: a body that always throws, written so that the compiler does not flag the
/// result builder's code after it as unreachable.
private func failWith(_ error: some Error) throws {
    throw error
}
