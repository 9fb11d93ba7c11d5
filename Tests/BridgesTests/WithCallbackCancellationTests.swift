import Bridges
import Dispatch
import TestSupport
import Testing

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
        let handedOver = LockedValue<KeepsItsHandler?>(nil)
        let calledBack = Signal()
        let value = try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
            let legacy = KeepsItsHandler()
            legacy.completion = done
            operation.object = legacy
            handedOver.value = legacy
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
        #expect(
            operation.object == nil,
            "the bridge kept the token, the token the operation, the operation the bridge: leaked")
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
                #expect(tokenRuns.count == 0)  // the token does not exist yet
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
        let sleeping = Signal()
        let sleeperCancelled = Signal()
        let task = Task {
            try await withCallback(
                timeout: .custom("never") {
                    sleeping.open()
                    await withTaskCancellationHandler {
                        await Signal().wait()  // would sleep forever
                    } onCancel: {
                        sleeperCancelled.open()
                    }
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
                timeout: .custom("never") {
                    _ = canary
                    clockRuns.append(())
                    try await suspendUntilCancelled()
                }
            ) { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in done(.success(4)) }
        }()
        #expect(value == 4)
        await clockReleased.wait()
        #expect(clockRuns.count == 0, "no clock runs for a call that ended before it suspended")
    }

    /// The callback races the frame's suspension from another thread: whichever is first, the
    /// value is returned, and the clock is either never started or started and cancelled; in both
    /// cases what it captured is released. The clock sleeps until its task is cancelled and records
    /// that it was; the test waits only for the release of its captures, which comes in both cases.
    @Test
    func timeout_whenTheCallbackRacesTheSuspension_theClockNeverOutlivesTheCall() async throws {
        var started = 0
        for iteration in 0..<1_000 {
            let clockStarted = Collected<Void>()
            let clockEnded = Collected<Bool>()  // whether its task was cancelled when it woke
            let clockReleased = Signal()
            let value: Int = try await {
                let canary = Canary(released: clockReleased)
                return try await withCallback(
                    timeout: .custom("never") {
                        _ = canary
                        clockStarted.append(())
                        await Signal().wait()  // returns only when this task is cancelled
                        clockEnded.append(Task.isCancelled)
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
                #expect(clockEnded.values == [true], "the clock ran, and ended only because it was cancelled")
            }
        }
        print("callback vs the clock's start: the clock started (and was cancelled) in \(started) of 1000 calls")
    }
}
