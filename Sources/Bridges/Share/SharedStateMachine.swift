/// The decisions of `shared()`: which generation a consumer joins, when an iteration of the
/// upstream starts, stops and restarts, and the stop timer. A pure value; `SharedSequence` locks
/// it, runs one event, releases the lock, then acts (starts or cancels a task, releases a fan-out).
///
/// What it guarantees:
/// - **One iteration at a time.** A new iteration starts only after the task of the previous one
///   has returned (Kotlin's `collectLatest` joins the cancelled collector before it starts the
///   next). Consumers that arrive while a stopped or ended iteration's task is still running
///   (an upstream slow to notice its cancellation) are counted in the next generation and wait
///   for it; they never start a second iteration beside it.
/// - **Subscribed before the first element.** An iteration starts only once every consumer
///   counted in its generation has subscribed to the generation's fan-out, so each of them sees
///   the iteration from its first element, however fast the upstream answers.
/// - **Generations.** A consumer belongs to the generation current when it joins (its first
///   `next()`). The generation moves on when its iteration is stopped or its task receives the
///   upstream's end: a consumer that joins after that belongs to the next one, and never sees the
///   ended generation's replay or end.
///
/// Generic over the fan-out (a broadcast), the iterating task's token and the stop timer's token,
/// so that tests can drive it with stand-ins and explore its events exhaustively.
struct SharedStateMachine<Fanout, Pump: AnyObject, Timer: AnyObject> {
    enum Phase {
        /// No consumer counted in the current generation, and no iteration of it runs. Entered
        /// at creation, when an iteration is stopped or its upstream ended (the generation moves
        /// on), and when the last consumer of a pending generation leaves. Left by `join`
        /// (→ pending).
        case idle
        /// An iteration is owed to `consumers` (≥ 1) of the current generation; it starts when
        /// the previous iteration's task has returned and none of them is still `subscribing`.
        /// Entered by `join` from idle. Left by the event that meets the last of those two
        /// conditions (`subscribed`, `iterationReturned`: → running), or by the last consumer
        /// leaving (→ idle).
        case pending(consumers: Int, subscribing: Int)
        /// `pump` iterates the upstream into the current generation's fan-out, for `consumers`
        /// (≥ 1, or 0 while `timer` runs out the stop timeout). Left by a stop (the last consumer
        /// leaves without a stop timeout, or the timer fires: → idle, the pump cancelled), or
        /// by the upstream's end (`iterationEnded`: → idle).
        case running(pump: Pump, consumers: Int, timer: Timer?)
    }

    private(set) var phase = Phase.idle
    /// The generation that consumers join now.
    private(set) var generation: UInt64 = 0
    /// The fan-out of `generation`.
    private(set) var fanout: Fanout
    /// The generation whose iteration was stopped or ended and whose task has not returned yet.
    /// At most one: no iteration starts while it is set.
    private(set) var unreturned: UInt64?

    init(fanout: Fanout) { self.fanout = fanout }

    /// What the caller does after releasing the lock, in this order.
    struct Action {
        /// Cancel this stop timer (a consumer came back, or the iteration is over).
        var cancelTimer: Timer?
        /// Cancel this iteration's task: it was stopped.
        var cancelPump: Pump?
        /// Start this stop timer; it calls `stopTimerFired` when it runs out.
        var startTimer: Timer?
        /// Start the iteration of `generation` into `fanout`, in a task owned by `pump`.
        var start: (pump: Pump, generation: UInt64, fanout: Fanout)?
        /// The fan-out of a generation that is over: released after the lock.
        var released: Fanout?
    }

    // MARK: - Consumers

    /// A consumer starts: it belongs to the current generation; the caller subscribes it to
    /// `fanout`, then calls `subscribed(generation)`.
    mutating func join() -> (fanout: Fanout, generation: UInt64, action: Action) {
        var action = Action()
        switch phase {
        case .idle:
            phase = .pending(consumers: 1, subscribing: 1)
        case .pending(let consumers, let subscribing):
            phase = .pending(consumers: consumers + 1, subscribing: subscribing + 1)
        case .running(let pump, let consumers, let timer):
            phase = .running(pump: pump, consumers: consumers + 1, timer: nil)
            action.cancelTimer = timer
        }
        return (fanout, generation, action)
    }

    /// The consumer that joined `generation` has subscribed to its fan-out. The last one the
    /// owed iteration waited for starts it.
    mutating func subscribed(_ generation: UInt64, makePump: () -> Pump) -> Action {
        guard generation == self.generation, case .pending(let consumers, let subscribing) = phase else {
            return Action()  // joined a running iteration, or a generation that is over (it got its end)
        }
        phase = .pending(consumers: consumers, subscribing: subscribing - 1)
        return startIfDue(makePump)
    }

    /// A consumer of `generation` left (after `subscribed`). The last one stops the iteration:
    /// now, or when the stop timer runs out (`stopTimeout`).
    mutating func leave(
        _ generation: UInt64, stopTimeout: Bool, makeTimer: () -> Timer, makeFanout: () -> Fanout
    ) -> Action {
        guard generation == self.generation else { return Action() }  // its generation is over
        switch phase {
        case .idle:
            preconditionFailure("Internal inconsistency: a consumer left generation \(generation), which counts none")
        case .pending(let consumers, let subscribing):
            phase = consumers == 1 ? .idle : .pending(consumers: consumers - 1, subscribing: subscribing)
            return Action()
        case .running(let pump, let consumers, let timer):
            precondition(consumers > 0 && timer == nil, "Internal inconsistency: \(phase) received leave()")
            if consumers > 1 {
                phase = .running(pump: pump, consumers: consumers - 1, timer: nil)
                return Action()
            }
            guard stopTimeout else { return stop(makeFanout) }
            let timer = makeTimer()
            phase = .running(pump: pump, consumers: 0, timer: timer)
            var action = Action()
            action.startTimer = timer
            return action
        }
    }

    /// `timer` ran out: stops the iteration unless a consumer came back (or it ended) meanwhile.
    mutating func stopTimerFired(_ timer: Timer, makeFanout: () -> Fanout) -> Action {
        guard case .running(_, 0, let current?) = phase, current === timer else { return Action() }
        return stop(makeFanout)
    }

    // MARK: - The iterating task

    /// The task iterating `generation` received the upstream's end or failure, and is about to
    /// hand it to that generation's consumers. Unless a stop came first, the generation moves on
    /// here: a consumer that joins from now on belongs to the next one.
    mutating func iterationEnded(_ generation: UInt64, makeFanout: () -> Fanout) -> Action {
        guard generation == self.generation else { return Action() }  // stopped first
        guard case .running(_, _, let timer) = phase else {
            preconditionFailure("Internal inconsistency: \(phase) received iterationEnded(\(generation))")
        }
        var action = moveOn(makeFanout)
        action.cancelTimer = timer
        return action
    }

    /// The task iterating `generation` returned (after `iterationEnded`): the iteration owed to
    /// the next generation's consumers may start.
    mutating func iterationReturned(_ generation: UInt64, makePump: () -> Pump) -> Action {
        precondition(
            unreturned == generation,
            "Internal inconsistency: the task of generation \(generation) returned, \(String(describing: unreturned)) was running"
        )
        unreturned = nil
        return startIfDue(makePump)
    }

    /// The shared sequence is released (so no consumer is left): stops what still runs.
    mutating func shutdown() -> Action {
        var action = Action()
        if case .running(let pump, _, let timer) = phase {
            action.cancelPump = pump
            action.cancelTimer = timer
        }
        phase = .idle
        return action
    }

    // MARK: - Helpers

    /// Starts the owed iteration if the previous task returned and every consumer subscribed.
    private mutating func startIfDue(_ makePump: () -> Pump) -> Action {
        guard unreturned == nil, case .pending(let consumers, 0) = phase else { return Action() }
        let pump = makePump()
        phase = .running(pump: pump, consumers: consumers, timer: nil)
        var action = Action()
        action.start = (pump, generation, fanout)
        return action
    }

    /// Stops the running iteration: cancels its task, and the generation moves on.
    private mutating func stop(_ makeFanout: () -> Fanout) -> Action {
        guard case .running(let pump, _, let timer) = phase else {
            preconditionFailure("Internal inconsistency: \(phase) received a stop")
        }
        var action = moveOn(makeFanout)
        action.cancelPump = pump
        action.cancelTimer = timer
        return action
    }

    /// The current generation's iteration is over (its task still has to return): the next
    /// generation begins, with a fresh fan-out and nobody in it.
    private mutating func moveOn(_ makeFanout: () -> Fanout) -> Action {
        precondition(unreturned == nil, "Internal inconsistency: two iterations' tasks running")
        unreturned = generation
        generation += 1
        phase = .idle
        var action = Action()
        action.released = fanout
        fanout = makeFanout()
        return action
    }

    // MARK: - Observing (tests)

    /// Consumers counted in the current generation.
    var consumers: Int {
        switch phase {
        case .idle: 0
        case .pending(let consumers, _), .running(_, let consumers, _): consumers
        }
    }

    /// Whether an iteration of the current generation runs (including during the stop timeout).
    var isRunning: Bool {
        if case .running = phase { true } else { false }
    }
}
