import Bridges
import Dispatch
import TestSupport
import Testing

/// The timeout is an owned task (the same core as `subscribe`, `withCompletion`, weak-owner
/// tasks): the first of "the bridge ended" and "the clock fired" wins, and its Task always ends.
@Suite("withCallback: timeout on the owned-task core", .timeLimit(.minutes(3)))
struct WithCallbackTimeoutRaceTests {
    static let iterations = 10_000

    /// The clock fires on one thread while the legacy API calls back on another. Exactly one
    /// ending: the value (the legacy call is not cancelled, nothing is late) or `timedOut` (the
    /// legacy call is cancelled once, the callback goes to `onLateResult` once). In both cases the
    /// timeout's Task ends and releases what its clock captured.
    @Test func timeoutVersusCallback_onTwoThreads_endsOnce_andTheTimeoutTaskEnds_10_000_iterations() async throws {
        var completed = 0
        var timedOut = 0
        for iteration in 0..<Self.iterations {
            let api = LegacyAPI<@Sendable (Result<Int, Never>) -> Void>()
            let elapse = Signal()
            let timeoutTaskReleased = Signal()
            let late = Collected<Int>()
            let task = Task {
                let canary = Canary(released: timeoutTaskReleased)  // held only by the timeout's clock
                return try await withCallback(
                    timeout: .custom("race") {
                        _ = canary
                        await elapse.wait()
                    },
                    onLateResult: { late.append($0.get()) }
                ) { done in api.start(done) }
            }
            await api.started.wait()
            // The clock's side goes through a Task wake-up: the callback's side waits a varying
            // while first, so both endings occur.
            DispatchQueue.concurrentPerform(iterations: 2) { side in
                if side == 0 {
                    _ = raceJitter(iteration % 100)
                    api.stored(.success(iteration))
                } else {
                    elapse.open()
                }
            }
            switch await task.result {
            case .success(let value):
                completed += 1
                #expect(value == iteration)
                #expect(api.cancelled.count == 0, "a completed call must not be cancelled")
                #expect(late.values.isEmpty)
            case .failure(let error):
                timedOut += 1
                #expect(error as? BridgeError == .timedOut)
                #expect(api.cancelled.count == 1, "a timed-out call is cancelled exactly once")
                #expect(late.values == [iteration], "the callback that lost goes to onLateResult once")
            }
            await timeoutTaskReleased.wait()  // the timeout's Task ended (it held the canary)
        }
        #expect(completed + timedOut == Self.iterations)
        print("timeout vs callback: \(completed) completed, \(timedOut) timed out of \(Self.iterations)")
    }

    /// Task cancellation against the clock: one ending, the legacy call cancelled exactly once
    /// whichever wins, and the timeout's Task ends.
    @Test func timeoutVersusTaskCancellation_onTwoThreads_cancelsTheLegacyCallOnce_10_000_iterations() async throws {
        var cancelled = 0
        var timedOut = 0
        for iteration in 0..<Self.iterations {
            let api = LegacyAPI<@Sendable (Result<Int, Never>) -> Void>()
            let elapse = Signal()
            let timeoutTaskReleased = Signal()
            let task = Task {
                let canary = Canary(released: timeoutTaskReleased)
                return try await withCallback(
                    timeout: .custom("race") {
                        _ = canary
                        await elapse.wait()
                    }
                ) { done in
                    api.start(done)
                }
            }
            await api.started.wait()
            DispatchQueue.concurrentPerform(iterations: 2) { side in
                if side == 0 {
                    _ = raceJitter(iteration % 100)
                    task.cancel()
                } else {
                    elapse.open()
                }
            }
            switch await task.result {
            case .success: Issue.record("no callback was made")
            case .failure(let error as BridgeError):
                #expect(error == .timedOut)
                timedOut += 1
            case .failure(let error):
                #expect(error is CancellationError)
                cancelled += 1
            }
            #expect(api.cancelled.count == 1, "the legacy call is cancelled exactly once")
            await timeoutTaskReleased.wait()
        }
        #expect(cancelled + timedOut == Self.iterations)
        print("timeout vs cancel: \(cancelled) cancelled, \(timedOut) timed out of \(Self.iterations)")
    }

    /// The legacy API drops its handler while the timeout waits: the bridge throws
    /// `callbackDropped` (no hang until the clock fires), and the timeout's Task is cancelled
    /// and ends.
    @Test func droppedHandlerWithATimeout_throwsCallbackDropped_andTheTimeoutTaskEnds() async throws {
        let api = LegacyAPI<@Sendable (Result<Int, Never>) -> Void>()
        let timeoutTaskReleased = Signal()
        let diagnostics = Collected<BridgeDiagnostic>()
        let task = Task {
            try await Diagnostics.withHandler({ diagnostics.append($0) }) {
                let canary = Canary(released: timeoutTaskReleased)
                return try await withCallback(
                    timeout: .custom("never") {
                        _ = canary
                        try await suspendUntilCancelled()
                    }
                ) { done in
                    api.start(done)
                }
            }
        }
        await api.started.wait()
        api.drop()
        await #expect(throws: BridgeError.callbackDropped) { try await task.value }
        await timeoutTaskReleased.wait()
        #expect(diagnostics.values.map(\.kind) == [.callbackDropped])
    }

    /// A bridge that completed while its body ran starts no timeout Task at all: the clock is
    /// never asked to sleep.
    @Test func callbackInsideTheBody_startsNoTimeoutTask() async throws {
        let sleeps = Counter()
        for value in 0..<100 {
            let result = try await withCallback(timeout: .custom("never asked") { sleeps.increment() }) {
                (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                done(.success(value))
            }
            #expect(result == value)
        }
        #expect(sleeps.value == 0)
    }
}
