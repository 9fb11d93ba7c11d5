/// One upstream `AsyncSequence` consumed by any number of consumers, each with its own buffering
/// policy: what `sequence.shared(replay:stopTimeout:)` returns.
///
/// ```swift
/// let locations = manager.locationUpdates.shared(replay: 1, stopTimeout: .after(.seconds(5)))
/// for await location in locations.stream(buffering: .latest) { … }     // a map view
/// for await location in locations.stream(buffering: .unbounded) { … }  // a track recorder
/// for await location in locations { … }                                // `.unbounded` too
/// ```
///
/// - **One iteration at a time.** The upstream is iterated by one task, started when the first
///   consumer starts iterating (its first `next()`). Each element goes to every consumer
///   iterating then, through that consumer's own policy (a slow lossy consumer makes no one else
///   lose anything), in the same order for all; with `replay: n` a consumer first receives the
///   last n elements of the current iteration.
/// - **Stops when nobody listens.** When the last consumer leaves (breaks out, is cancelled,
///   drops its iterator) the iterating task is cancelled before that consumer's teardown returns
///   or, with `stopTimeout`, once that timeout has elapsed with nobody back: a consumer arriving
///   within it joins the running iteration, so a screen rotation does not restart a network
///   request.
/// - **Restarts on demand.** The upstream's end or failure reaches every consumer iterating
///   then (after what each one buffered); a consumer that starts after that starts a new
///   iteration of the upstream (`makeAsyncIterator()` again).
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

    /// Who is connected to the upstream now. Not a state machine: a counter and the objects of
    /// the current iteration, swapped under the lock; everything they decide (start the task,
    /// cancel it, start or cancel the stop timer, release a broadcast) is done after it.
    struct Connection: Sendable {
        /// The fan-out of the current iteration (or of the next one, while none runs). Replaced by
        /// a fresh one when an iteration ends or is stopped; its identity is the generation a
        /// consumer belongs to.
        var broadcast: ThrowingBroadcast<Element, Failure>
        /// The task iterating the upstream into `broadcast`; nil while none runs.
        var task: OwnedTask?
        /// Consumers of this iteration that have not left.
        var consumers = 0
        /// The stop timer running since the last consumer left (`stopTimeout` only).
        var stopTimer: OwnedTask?
    }

    let iteration: Iteration
    let replay: Int
    let stopTimeout: BridgeTimeout?
    let site: CallSite
    let connection: LockedState<Connection>

    init(replay: Int, stopTimeout: BridgeTimeout?, site: CallSite, iteration: @escaping Iteration) {
        if replay < 0 {
            _argumentError("shared(replay:): replay must be ≥ 0, got \(replay)", fileID: site.fileID, line: site.line)
        }
        self.iteration = iteration
        self.replay = replay
        self.stopTimeout = stopTimeout
        self.site = site
        connection = LockedState(
            Connection(broadcast: ThrowingBroadcast(replay: replay, fileID: site.fileID, line: site.line)))
    }

    /// Only reached with no consumer left (each one's stream keeps the sequence alive), so at
    /// most an iteration waiting out its stop timeout: it stops now.
    deinit {
        let (task, timer) = connection.withLock { ($0.task, $0.stopTimer) }
        timer?.cancel()
        task?.cancel()
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
            let (broadcast, start) = join()
            let subscription = broadcast.subscribe(sink, waiting: waiting)
            // The iteration starts after the consumer that starts it has subscribed: a fast
            // upstream's first elements reach it instead of a broadcast nobody listens to yet.
            if let start { run(start, into: broadcast) }
            return Cancellation { [self] in
                subscription.cancel()
                leave(broadcast)
            }
        }
    }

    /// Iterates as a consumer with the `.unbounded` policy: `stream()`'s iterator.
    public func makeAsyncIterator() -> CallbackStream<Element, Failure>.AsyncIterator {
        stream().makeAsyncIterator()
    }

    // MARK: - Joining and leaving

    /// Counts a consumer in and cancels a stop timer; returns the broadcast to subscribe to, and
    /// the iteration's task to start (with `run`) if none runs yet.
    private func join() -> (ThrowingBroadcast<Element, Failure>, start: OwnedTask?) {
        let (broadcast, start, timer) = connection.withLock { state in
            state.consumers += 1
            defer { state.stopTimer = nil }
            if state.task != nil { return (state.broadcast, nil as OwnedTask?, state.stopTimer) }
            let task = OwnedTask()
            state.task = task
            return (state.broadcast, task, state.stopTimer)
        }
        timer?.cancel()
        return (broadcast, start)
    }

    /// Starts the iteration that `join` decided on. A consumer that left meanwhile has already
    /// cancelled `start`, which then cancels the task as it is attached.
    private func run(_ start: OwnedTask, into broadcast: ThrowingBroadcast<Element, Failure>) {
        // Weak: a running iteration does not keep the sequence alive (its deinit stops it).
        start.attach(
            Task { [weak self, iteration] in
                let failure = await iteration(broadcast)
                start.finish()
                self?.ended(broadcast)
                if let failure { broadcast.finish(throwing: failure) } else { broadcast.finish() }
            })
    }

    /// The iteration of `broadcast`'s generation returned. Unless a stop came first, the next
    /// generation begins here, before the consumers are finished: a consumer that starts after
    /// the end was decided starts a new iteration instead of finding this one over.
    private func ended(_ broadcast: ThrowingBroadcast<Element, Failure>) {
        let ended = connection.withLock { state -> Connection? in
            guard state.broadcast === broadcast else { return nil }  // stopped: a newer generation runs
            return stop(&state)
        }
        ended?.stopTimer?.cancel()
    }

    /// A consumer of `broadcast`'s generation left: the last one stops the iteration, now or
    /// after the stop timeout.
    private func leave(_ broadcast: ThrowingBroadcast<Element, Failure>) {
        let stopTimeout = self.stopTimeout
        let (stopped, timer) = connection.withLock { state -> (Connection?, OwnedTask?) in
            guard state.broadcast === broadcast else { return (nil, nil) }  // an older generation
            state.consumers -= 1
            guard state.consumers == 0 else { return (nil, nil) }
            guard stopTimeout != nil else { return (stop(&state), nil) }
            let timer = OwnedTask()
            state.stopTimer = timer
            return (nil, timer)
        }
        stopped?.task?.cancel()  // the broadcast it held is released here, outside the lock
        if let timer, let stopTimeout {
            timer.attach(
                Task { [weak self] in
                    do { try await stopTimeout.sleep() } catch { return }
                    self?.stopTimerFired(timer)
                })
        }
    }

    /// The stop timeout elapsed: stops the iteration unless a consumer came back meanwhile.
    private func stopTimerFired(_ timer: OwnedTask) {
        let stopped = connection.withLock { state -> Connection? in
            guard state.stopTimer === timer else { return nil }
            return stop(&state)
        }
        timer.finish()
        stopped?.task?.cancel()
    }

    /// Starts the next generation; returns the current one, whose task the caller cancels (and
    /// whose broadcast it releases) after unlocking.
    private func stop(_ state: inout Connection) -> Connection {
        defer { state = Connection(broadcast: ThrowingBroadcast(replay: replay, fileID: site.fileID, line: site.line)) }
        return state
    }

    // MARK: - Observing (tests)

    /// Consumers of the current iteration that have not left.
    var consumerCount: Int { connection.withLock { $0.consumers } }

    /// Whether a task iterates the upstream now (including during the stop timeout).
    var isIterating: Bool { connection.withLock { $0.task != nil } }

    /// Suspends until `count` consumers are subscribed to the current iteration's broadcast.
    func waitForSubscribers(_ count: Int) async {
        await connection.withLock { $0.broadcast }.waitForSubscribers(count)
    }
}
