/// A clock whose time moves only when the test says so: `advance(by:)`, `advance(to:)`, `run()`.
///
/// Pass it wherever code takes `some Clock<Duration>`, and to Bridges' timeouts
/// (`BridgeTimeout.after(.seconds(5), on: clock)`).
///
/// Before (waits 0.33 s of real time, and is flaky on a loaded machine):
/// <!-- snippet: test — with a `SearchPresenter` and a fake `api` -->
/// ```swift
/// let presenter = SearchPresenter(api: api, clock: ContinuousClock())
/// try await presenter.searchText.send("123")
/// try await Task.sleep(for: .milliseconds(330))
/// #expect(api.invocations.map(\.request) == ["123"])
/// ```
/// After (takes a millisecond or two):
/// <!-- snippet: test — with a `SearchPresenter` and a fake `api` -->
/// ```swift
/// let clock = TestClock()
/// try await withSerialTasks {
///     let presenter = SearchPresenter(api: api, clock: clock)
///     try await presenter.searchText.send("123")
///     await clock.advance(by: .milliseconds(300))
///     #expect(api.invocations.map(\.request) == ["123"])
/// }
/// ```
///
/// How sleepers wake:
/// - in deadline order; sleepers with equal deadlines first-in-first-out: in the order their
///   `sleep` calls registered with the clock (under its lock), which is the order they suspended;
/// - one at a time, with `now` equal to that sleeper's deadline while it runs, so advancing
///   4 s at once fires a 1 s interval timer 4 times, each seeing its own `now`, exactly as four
///   1 s steps do;
/// - `advance` does not wake the next sleeper until the woken task has returned from `sleep`
///   (a handshake, not a yield loop). Inside ``withSerialTasks(isolation:fileID:line:_:)`` it also waits,
///   before each wake and after it, until every tracked task is idle: then the woken task has
///   slept again, finished, or is waiting on something else, and work it started has run.
///   Without `withSerialTasks`, what the woken task does after `sleep` returns races with the
///   test; that is the one case this clock cannot make deterministic on its own.
/// - a cancelled sleeper throws `CancellationError` at once, from the cancelling thread, and
///   leaves the clock.
///
/// Advancing from several tasks at once: `advance` and `run` take turns, first come first
/// served; each runs to its end (all its wake-ups and handshakes) before the next starts, and
/// `advance(by:)` counts from `now` when its turn comes. An advancer whose task is cancelled
/// while it waits for its turn returns without advancing; one cancelled while advancing
/// finishes the wake-up in progress (its handshake included), then stops with `now` at that
/// sleeper's deadline. Either way the clock is consistent: no sleeper is due at or before
/// `now`, and the next advancer gets the turn.
///
/// Sleeps whose deadline is not after `now` return at once. The clock is `Sendable` and
/// lock-based; any task may sleep on it and any task may advance it.
@available(BridgesClock, *)
public final class TestClock: Clock, Sendable, CustomStringConvertible {
    /// A point in virtual time: an offset from the clock's start.
    public struct Instant: InstantProtocol, CustomStringConvertible {
        public let offset: Duration

        public init(offset: Duration = .zero) { self.offset = offset }
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        public var description: String { "t+\(offset)" }
    }

    private let state: LockedState<TestClockState>
    /// The most wake-ups `run()` performs before deciding that a timer repeats forever.
    private let runLimit: Int

    /// Creates a clock at `now` (offset zero by default).
    public init(now: Instant = Instant(), runLimit: Int = 10_000) {
        XCTestFailureRecorder.start()
        state = LockedState(TestClockState(now: now.offset))
        self.runLimit = runLimit
    }

    public var now: Instant { Instant(offset: state.withLock { $0.now }) }
    public var minimumResolution: Duration { .zero }
    public var description: String { "TestClock(now: \(now), sleepers: \(pendingSleepers.count))" }

    /// Deadlines of the tasks sleeping on this clock, in the order they will wake.
    public var pendingSleepers: [Instant] { state.withLock { $0.sleepers.map { Instant(offset: $0.deadline) } } }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let id = state.withLock { $0.makeID() }
        let woke = Gate()
        defer { woke.open() }  // the handshake: `advance` waits for this
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                let sleeper = TestClockState.Sleeper(
                    id: id, deadline: deadline.offset, continuation: continuation, woke: woke)
                switch state.withLock({ $0.sleep(sleeper) }) {
                case .suspended(let gates):
                    for gate in gates { gate.open() }
                case .resumeNow:
                    continuation.resume()
                case .resumeCancelled:
                    continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            state.withLock { $0.cancel(id) }?.resume(throwing: CancellationError())
        }
        state.withLock { $0.forget(id) }
    }

    /// Moves time forward by `duration` from `now` at the moment this advance gets its turn,
    /// waking every sleeper whose deadline falls within it, one at a time, in order. See the
    /// type's documentation for what "waking" waits for, and for concurrent and cancelled calls.
    public func advance(by duration: Duration = .zero, fileID: String = #fileID, line: UInt = #line) async {
        guard await takeTurn() else { return }
        await advanceHoldingTurn(to: now.advanced(by: duration), fileID: fileID, line: line)
        releaseTurn()
    }

    /// Moves time forward to `deadline`, waking every sleeper due by then, one at a time, in order.
    public func advance(to deadline: Instant, fileID: String = #fileID, line: UInt = #line) async {
        guard await takeTurn() else { return }
        await advanceHoldingTurn(to: deadline, fileID: fileID, line: line)
        releaseTurn()
    }

    /// Advances to each next deadline until no task sleeps on this clock.
    ///
    /// A timer that always sleeps again would make this run forever: after `runLimit` wake-ups
    /// it records a test failure and returns. Holds the turn for the whole run (no other
    /// `advance` interleaves); stops after the wake-up in progress if its task is cancelled.
    public func run(fileID: String = #fileID, line: UInt = #line) async {
        guard await takeTurn() else { return }
        defer { releaseTurn() }
        await settle(fileID: fileID, line: line)
        var wakeUps = 0
        while !Task.isCancelled, let next = state.withLock({ $0.sleepers.first?.deadline }) {
            if wakeUps == runLimit {
                _reportTestFailure(
                    "TestClock.run() woke \(runLimit) sleepers and tasks still sleep (a repeating timer?); stopped at \(now) with sleepers at \(pendingSleepers)",
                    fileID: fileID, line: line
                )
                return
            }
            wakeUps += 1
            await advanceHoldingTurn(to: Instant(offset: next), fileID: fileID, line: line)
        }
    }

    private func advanceHoldingTurn(to deadline: Instant, fileID: String, line: UInt) async {
        let start = now
        if deadline < start {
            _reportTestFailure(
                "TestClock.advance(to: \(deadline)) would move time backwards from \(start); time stays at \(start)",
                fileID: fileID, line: line
            )
            return
        }
        await settle(fileID: fileID, line: line)
        // Cancelled: stop between wake-ups. `now` stays at the last woken sleeper's deadline,
        // so every sleeper left is still due after `now`, as if the advance had been shorter.
        while !Task.isCancelled, let sleeper = state.withLock({ $0.popDue(upTo: deadline.offset) }) {
            sleeper.continuation.resume()
            // The handshake completes even if this task is cancelled meanwhile: skipping it
            // would let the next wake-up overtake the task just woken.
            await sleeper.woke.waitIgnoringCancellation()
            await settle(fileID: fileID, line: line)
        }
    }

    /// Waits for this advancer's turn, first come first served. Returns false, having done
    /// nothing, if the task is cancelled while it waits (or before).
    private func takeTurn() async -> Bool {
        if Task.isCancelled { return false }
        let id = state.withLock { $0.makeID() }
        defer { state.withLock { $0.forgetTurnRequest(id) } }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Bool, Never>) in
                switch state.withLock({ $0.requestTurn(id, continuation) }) {
                case .go: continuation.resume(returning: true)
                case .cancelled: continuation.resume(returning: false)
                case .wait: break
                }
            }
        } onCancel: {
            state.withLock { $0.cancelTurnRequest(id) }?.resume(returning: false)
        }
    }

    private func releaseTurn() {
        state.withLock { $0.releaseTurn() }?.resume(returning: true)
    }

    /// Waits until at least `count` tasks sleep on this clock: a deterministic way to know that
    /// code running in another task has scheduled its timer before the test advances time.
    ///
    /// Waits at most `timeout` of real time, then records a test failure naming the count.
    public func waitForSleepers(
        _ count: Int = 1, timeout: Duration = .seconds(5), fileID: String = #fileID, line: UInt = #line
    ) async {
        let gate = state.withLock { $0.gate(whenSleeping: count) }
        if await !gate.wait(atMost: timeout) {
            _reportTestFailure(
                "expected \(count) task(s) sleeping on the TestClock within \(timeout); \(pendingSleepers.count) are",
                fileID: fileID, line: line
            )
        }
    }

    /// Records a test failure if any task still sleeps on this clock: call it at the end of a
    /// test, so that a timer the code forgot to cancel (or a sleep the test forgot to reach) is
    /// noticed. Inside ``withSerialTasks(isolation:fileID:line:_:)`` it first waits until tracked tasks are idle.
    public func expectNoPendingSleepers(fileID: String = #fileID, line: UInt = #line) async {
        await settle(fileID: fileID, line: line)
        let pending = pendingSleepers
        if !pending.isEmpty {
            _reportTestFailure(
                "expected no task sleeping on the TestClock at \(now), but \(pending.count) sleep(s) are pending, with deadlines \(pending.map(\.description).joined(separator: ", "))",
                fileID: fileID, line: line
            )
        }
    }

    private func settle(fileID: String, line: UInt) async {
        await settleIfTracked(fileID: fileID, line: line)
    }
}

@available(BridgesClock, *)
extension Clock where Self == TestClock {
    /// A new ``TestClock`` at offset zero.
    ///
    /// swift-clocks declares `.test` for its own `TestClock<Duration>`: where both modules are
    /// imported, `.test` is swift-clocks' (this one is disfavored, so the call resolves instead
    /// of being ambiguous); write `BridgesTesting.TestClock()` there.
    @_disfavoredOverload
    public static var test: TestClock { TestClock() }
}
