/// Credit-based pause and resume for a source that can stop producing: a socket or channel
/// (`read()`/`autoRead`), a `FileHandle` (the reader behind `readChunks`/`readLines` uses it), a `DispatchSource`
/// (`suspend()`/`resume()`), a streaming HTTP delegate (completing its back-pressure future).
///
/// Non-blocking: it never waits and never holds a lock while it calls out, so it can be fed
/// from an event loop. It calls `pause` and `resume` itself, strictly alternating, and always
/// ends in the state the credits ask for, so the classic lost wake-up (the consumer makes room
/// in the gap between `yield` answering `.stopProducing` and the source pausing, and the
/// source then pauses for good) cannot happen: whichever thread changes the credits last
/// makes sure the source ends up running if there is credit and paused if there is none.
///
/// Before (loses its wake-up when `onDemand` fires before `pause()` took effect):
/// <!-- snippet: body — in a method of a `@MainActor` view model with a pausable `source` -->
/// ```swift
/// let chunks = CallbackStream<Data, Never>(buffering: .suspending(4)) { sink in
///     sink.onDemand { _ in source.resume() }
///     source.onChunk = { chunk in
///         if case .stopProducing = sink.yield(chunk) { source.pause() }
///     }
///     return Cancellation { source.cancel() }
/// }
/// ```
/// After:
/// <!-- snippet: body — in a method of a `@MainActor` view model with a pausable `source` -->
/// ```swift
/// let chunks = CallbackStream<Data, Never>(buffering: .suspending(4)) { sink in
///     let gate = DemandGate(pause: { source.pause() }, resume: { source.resume() })
///     sink.onDemand { gate.add($0) }      // the room in the buffer, as it appears
///     source.onChunk = { chunk in
///         gate.spend(); sink.yield(chunk)  // one credit per element: spend it, then yield
///     }
///     return Cancellation { gate.stop(); source.cancel() }
/// }
/// ```
///
/// **Spend before you yield.** Once an element is yielded the consumer may take it and report
/// the room it leaves, at once, on its own thread. An element yielded beyond the credit uses no
/// demand in the stream, and its spend clamps at zero here; spent *after* that report, it would
/// eat the new credit instead, and the source would wait for demand the stream believes it
/// already gave: a lost wake-up. Spent before, the clamp happens while nobody can have seen
/// the element.
///
/// - `pause` and `resume` are called on the thread that called ``spend(_:)`` (the producer's)
///   or ``add(_:)`` (the consumer's), one at a time, never concurrently with each other, and
///   never twice in a row. A source whose `pause`/`resume` must run on its own thread (an event
///   loop) hops there inside the closures; hops queued in order keep that order.
/// - The source is assumed running when the gate is created.
/// - Credits saturate at `Int.max` (unbounded and lossy policies report `Int.max` once).
public final class DemandGate: Sendable {
    private struct State {
        var credits: Int
        /// What the source was last told (true: paused).
        var paused = false
        /// A thread is calling `pause`/`resume` now; it re-checks the credits before it stops.
        var acting = false
        var stopped = false

        /// The state the source should be in, if it differs from what it was last told and
        /// nobody is acting on it yet; the caller then acts (and loops until they agree).
        mutating func nextMove() -> Bool? {
            guard !acting, !stopped else { return nil }
            let shouldPause = credits <= 0
            guard shouldPause != paused else { return nil }
            acting = true
            return shouldPause
        }
    }

    private let state: LockedState<State>
    private let pause: @Sendable () -> Void
    private let resume: @Sendable () -> Void

    /// - Parameters:
    ///   - credits: Credits at the start (usually 0: the stream's `onDemand` reports the room
    ///     when it is registered).
    ///   - pause: Stops the source producing. Called when the credits run out.
    ///   - resume: Lets the source produce again. Called when credits come back after a pause.
    public init(
        credits: Int = 0,
        pause: @escaping @Sendable () -> Void,
        resume: @escaping @Sendable () -> Void
    ) {
        state = LockedState(State(credits: credits))
        self.pause = pause
        self.resume = resume
    }

    /// The consumer can take `count` more elements: pass what the sink's `onDemand` reports.
    /// Resumes the source (on this thread) if it was paused.
    public func add(_ count: Int) {
        guard count > 0 else { return }
        let move = state.withLock { state -> Bool? in
            state.credits = state.credits > Int.max - count ? Int.max : state.credits + count
            return state.nextMove()
        }
        act(move)
    }

    /// Records that `count` elements are about to be yielded: call it *before* yielding them (see
    /// "Spend before you yield" above). When the credits run out, pauses the source
    /// (on this thread) before returning. Credits never go below zero: a stream reports demand
    /// from its buffer's depth, so elements yielded beyond the credit (a chunk of lines cannot
    /// be un-read) are already counted in the room it reports later, when they were taken.
    ///
    /// - Returns: Whether the source may go on producing (credit is left, and ``stop()`` was
    ///   not called). A source without a pause of its own (a loop) stops when this is false and
    ///   starts again from `resume`.
    @discardableResult
    public func spend(_ count: Int = 1) -> Bool {
        let (move, running) = state.withLock { state -> (Bool?, Bool) in
            if state.credits != Int.max { state.credits = Swift.max(0, state.credits - count) }
            return (state.nextMove(), state.credits > 0 && !state.stopped)
        }
        act(move)
        return running
    }

    /// Stops the gate for good (call it from the stream's teardown): no `pause` or `resume` call
    /// starts after this returns (one already running on another thread finishes).
    public func stop() {
        state.withLock { $0.stopped = true }
    }

    /// Credits left.
    public var credits: Int { state.withLock { $0.credits } }

    /// Whether the source was last told to pause.
    public var isPaused: Bool { state.withLock { $0.paused } }

    /// Whether ``stop()`` was called.
    public var isStopped: Bool { state.withLock { $0.stopped } }

    /// Calls `pause`/`resume` outside the lock until what the source was told matches the
    /// credits, so a change made by another thread meanwhile is never lost.
    private func act(_ move: Bool?) {
        var move = move
        while let shouldPause = move {
            if shouldPause { pause() } else { resume() }
            move = state.withLock { state -> Bool? in
                state.paused = shouldPause
                state.acting = false
                return state.nextMove()
            }
        }
    }
}
