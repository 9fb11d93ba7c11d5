/// One upstream `AsyncSequence` consumed by any number of consumers, each with its own buffering
/// policy: what `sequence.shared(replay:stopTimeout:)` returns.
///
/// <!-- snippet: body — in a method of a `@MainActor` view model with `locationUpdates`, a stream of the legacy manager's updates -->
/// ```swift
/// let locations = locationUpdates.shared(replay: 1, stopTimeout: .after(.seconds(5)))
/// for try await location in locations.stream(buffering: .latest) { show(location) }     // a map view
/// for try await location in locations.stream(buffering: .unbounded) { record(location) }  // a track recorder
/// for try await location in locations { record(location) }                              // `.unbounded` too
/// ```
///
/// - **One iteration at a time.** The upstream is iterated by one task, started when the first
///   consumer starts iterating (its first `next()`), once it has subscribed (so it receives the
///   first element, however fast the upstream answers). Each element goes to every consumer
///   iterating then, through that consumer's own policy (a slow lossy consumer makes no one else
///   lose anything), in the same order for all; with `replay: n` a consumer first receives the
///   last n elements of the current iteration.
/// - **Stops when nobody listens.** When the last consumer leaves (breaks out, is cancelled,
///   drops its iterator) the iterating task is cancelled before that consumer's teardown returns
///   or, with `stopTimeout`, once that timeout has elapsed with nobody back: a consumer arriving
///   within it joins the running iteration, so a screen rotation does not restart a network
///   request.
/// - **Never two iterations at once.** A new iteration starts only after the previous one's task
///   has returned (its iterator released): a consumer arriving while a stopped iteration's task is
///   still inside the upstream's `next()` (an upstream slow to notice its cancellation) waits
///   for it, then starts the new one. An upstream that cannot be iterated twice at once (a
///   `FileHandle`'s `readChunks()`) is safe to share.
/// - **Restarts on demand; who sees which end.** A consumer belongs to the iteration current
///   when it starts iterating. The upstream's end or failure counts when the iterating task
///   receives it (after the upstream's `next()` has returned it): from then on, a consumer
///   that starts belongs to the next iteration (`makeAsyncIterator()` again) and receives
///   neither the ended iteration's replay nor its end; every consumer of the ended iteration
///   receives the end or failure after what it buffered. So a consumer that starts once another
///   one has received the end never gets that end; one that starts while the task waits for the
///   upstream's answer, and that answer is the end, receives the replay and then that end.
/// - **Failures.** Every consumer of an iteration that fails throws its failure (or
///   `CancellationError`, if its task was cancelled first); none ends as if the upstream had
///   finished.
/// - **Backpressure.** Consumers under a waiting policy (`.rendezvous`, `.suspending(n)`) hold
///   the upstream back: it asks for its next element only when every one of them has room.
///   Lossy and unbounded consumers never hold it back.
/// - Threads and isolation are ``Broadcast``'s: elements reach a consumer's buffer on the
///   iterating task's thread, never under a lock; a consumer takes them in its own isolation.
///
/// Unlike swift-async-algorithms' `share(bufferingPolicy:)` (macOS 15 / iOS 18): the policy is
/// per consumer, not one buffer for all (so under `.bounded(1)` there the slowest consumer paces
/// everyone; here only consumers that chose a waiting policy do); the upstream is iterated again
/// after it ended or was stopped, where theirs is iterated once ever; `replay` and
/// `stopTimeout` (Kotlin's `shareIn(scope, WhileSubscribed(stopTimeout), replay)`) have no
/// counterpart there; and it runs back to the package's floor. Unlike Kotlin's `SharedFlow`,
/// the upstream's end ends the consumers, and the replay belongs to one iteration.
public final class SharedSequence<Element: Sendable, Failure: Error>: AsyncSequence, Sendable {
    /// Iterates the upstream once into the broadcast, pulling an element only when the
    /// broadcast has room for it; returns the upstream's failure (nil at its end or when cancelled).
    typealias Iteration = @Sendable (ThrowingBroadcast<Element, Failure>) async -> Failure?
    typealias Machine = SharedStateMachine<ThrowingBroadcast<Element, Failure>, OwnedTask, OwnedTask>

    let iteration: Iteration
    let replay: Int
    let stopTimeout: BridgeTimeout?
    let site: CallSite
    let state: LockedState<Machine>

    init(replay: Int, stopTimeout: BridgeTimeout?, site: CallSite, iteration: @escaping Iteration) {
        if replay < 0 {
            _argumentError("shared(replay:): replay must be ≥ 0, got \(replay)", fileID: site.fileID, line: site.line)
        }
        self.iteration = iteration
        self.replay = replay
        self.stopTimeout = stopTimeout
        self.site = site
        state = LockedState(Machine(fanout: ThrowingBroadcast(replay: replay, fileID: site.fileID, line: site.line)))
    }

    /// Only reached with no consumer left (each one's stream keeps the sequence alive), so at
    /// most an iteration waiting out its stop timeout: it stops now.
    deinit {
        act(state.withLock { $0.shutdown() })
    }

    /// A new consumer's stream: it joins the upstream's iteration (starting one if none runs)
    /// when it starts iterating, and leaves at its teardown.
    ///
    /// - Parameters:
    ///   - buffering: This consumer's policy for elements it has not taken yet. A waiting policy
    ///     holds the upstream back; the others never do.
    ///   - onDrop: Called with each element this consumer's policy drops, on the iterating task.
    ///   - onUndelivered: Called with each element sent to this consumer and never delivered,
    ///     with the reason (see ``CallbackStream``).
    ///   - line: Call site reported with any misuse; leave the default.
    ///   - fileID: Call site reported with any misuse; leave the default.
    public func stream(
        buffering: BufferingPolicy = .unbounded,
        onDrop: (@Sendable (Element) -> Void)? = nil,
        onUndelivered: CallbackStream<Element, Failure>.UndeliveredHandler? = nil,
        fileID: String = #fileID,
        line: UInt = #line
    ) -> CallbackStream<Element, Failure> {
        let waiting = buffering.isWaiting
        return CallbackStream.synchronous(
            buffering: buffering, onDrop: onDrop, onUndelivered: onUndelivered, fileID: fileID, line: line
        ) {
            [self] sink in
            let (broadcast, generation, joined) = state.withLock { $0.join() }
            act(joined)
            let subscription = broadcast.subscribe(sink, waiting: waiting)
            // The iteration starts once every consumer counted for it has subscribed: a fast
            // upstream's first elements reach them instead of a broadcast nobody listens to yet.
            act(state.withLock { $0.subscribed(generation, makePump: OwnedTask.init) })
            return Cancellation { [self] in
                subscription.cancel()
                leave(generation)
            }
        }
    }

    /// Iterates as a consumer with the `.unbounded` policy: `stream()`'s iterator.
    public func makeAsyncIterator() -> CallbackStream<Element, Failure>.AsyncIterator {
        stream().makeAsyncIterator()
    }

    // MARK: - Events

    /// A consumer of `generation` left: the last one stops the iteration, now or after the stop
    /// timeout.
    private func leave(_ generation: UInt64) {
        let stopTimeout = stopTimeout != nil
        act(
            state.withLock {
                $0.leave(generation, stopTimeout: stopTimeout, makeTimer: OwnedTask.init, makeFanout: makeFanout)
            })
    }

    /// The stop timeout elapsed: stops the iteration unless a consumer came back meanwhile.
    private func stopTimerFired(_ timer: OwnedTask) {
        let action = state.withLock { $0.stopTimerFired(timer, makeFanout: makeFanout) }
        timer.finish()
        act(action)
    }

    private func makeFanout() -> ThrowingBroadcast<Element, Failure> {
        ThrowingBroadcast(replay: replay, fileID: site.fileID, line: site.line)
    }

    // MARK: - Acting outside the lock

    private func act(_ action: Machine.Action) {
        action.cancelTimer?.cancel()
        action.cancelPump?.cancel()
        if let timer = action.startTimer, let stopTimeout {
            timer.attach(
                Task { [weak self] in
                    do { try await stopTimeout.sleep() } catch { return }
                    self?.stopTimerFired(timer)
                })
        }
        if let (pump, generation, broadcast) = action.start { run(pump, generation, into: broadcast) }
        withExtendedLifetime(action.released) {}  // a generation that is over, released outside the lock
    }

    /// Iterates the upstream into `broadcast` for the consumers of `generation`, in a task owned
    /// by `pump` (which a stop cancels, before or after the task is attached).
    private func run(_ pump: OwnedTask, _ generation: UInt64, into broadcast: ThrowingBroadcast<Element, Failure>) {
        // Weak: a running iteration does not keep the sequence alive (its deinit stops it).
        pump.attach(
            Task { [weak self, iteration] in
                let failure = await iteration(broadcast)  // the upstream's iterator is released here
                pump.finish()
                // The generation moves on before its consumers receive the end: a consumer that
                // starts once one of them has it belongs to the next iteration.
                if let self { act(state.withLock { $0.iterationEnded(generation, makeFanout: makeFanout) }) }
                if let failure { broadcast.finish(throwing: failure) } else { broadcast.finish() }
                // Last: the next iteration (owed to consumers who arrived meanwhile) starts only now.
                if let self { act(state.withLock { $0.iterationReturned(generation, makePump: OwnedTask.init) }) }
            })
    }

    // MARK: - Observing (tests)

    /// Consumers of the current iteration that have not left.
    var consumerCount: Int { state.withLock { $0.consumers } }

    /// Whether a task iterates the upstream for the current generation now (including during
    /// the stop timeout).
    var isIterating: Bool { state.withLock { $0.isRunning } }

    /// Whether the task of a stopped or ended iteration has not returned yet.
    var hasUnreturnedIteration: Bool { state.withLock { $0.unreturned != nil } }

    /// Suspends until `count` consumers are subscribed to the current generation's broadcast.
    func waitForSubscribers(_ count: Int) async {
        await state.withLock { $0.fanout }.waitForSubscribers(count)
    }
}
