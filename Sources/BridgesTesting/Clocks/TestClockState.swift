/// The pure state of a ``TestClock``: virtual now, the sleepers, and whose turn it is to advance.
///
/// Invariants: every registered sleeper's deadline is after `now` (a sleeper is popped before
/// `now` reaches its deadline, and `now` never moves past a sleeper still registered); at most
/// one advancer holds the turn (`isAdvancing`), the others wait in FIFO order.
@available(BridgesClock, *)
struct TestClockState {
    struct Sleeper {
        let id: UInt64
        let deadline: Duration
        let continuation: UnsafeContinuation<Void, any Error>
        /// Opened by the sleeping task once it has returned from `sleep`.
        let woke: Gate
    }

    private(set) var now: Duration
    private var nextID: UInt64 = 0
    /// Sorted by deadline; sleepers with equal deadlines stay in the order in which they
    /// registered here (`sleep(_:)` inserts after every sleeper with the same deadline), so they
    /// wake first-in-first-out. That is registration order, under the clock's lock, not `id`
    /// order: ids are taken before a sleeper registers, and two tasks racing to sleep may
    /// register in the other order.
    private(set) var sleepers: [Sleeper] = []
    /// Whether an `advance` or `run` holds the turn.
    private(set) var isAdvancing = false
    /// Advancers waiting for the turn, first come first served.
    private var advanceWaiters: [(id: UInt64, continuation: UnsafeContinuation<Bool, Never>)] = []
    /// Advancers cancelled before their continuation was registered.
    private var advancersCancelledBeforeRegistering: Set<UInt64> = []
    /// Sleepers whose task was cancelled before their continuation was registered.
    private var cancelledBeforeRegistering: Set<UInt64> = []
    private var countWaiters: [(count: Int, gate: Gate)] = []

    init(now: Duration) { self.now = now }

    mutating func makeID() -> UInt64 {
        nextID += 1
        return nextID
    }

    enum SleepAction {
        case suspended(openGates: [Gate])
        case resumeNow
        case resumeCancelled
    }

    mutating func sleep(_ sleeper: Sleeper) -> SleepAction {
        if cancelledBeforeRegistering.remove(sleeper.id) != nil { return .resumeCancelled }
        if sleeper.deadline <= now { return .resumeNow }
        let index = sleepers.firstIndex { $0.deadline > sleeper.deadline } ?? sleepers.endIndex
        sleepers.insert(sleeper, at: index)
        var open: [Gate] = []
        countWaiters.removeAll { waiter in
            guard sleepers.count >= waiter.count else { return false }
            open.append(waiter.gate)
            return true
        }
        return .suspended(openGates: open)
    }

    /// Cancellation: returns the continuation to resume with `CancellationError`, if the
    /// sleeper was still registered. A sleeper not yet registered is remembered.
    mutating func cancel(_ id: UInt64) -> UnsafeContinuation<Void, any Error>? {
        if let index = sleepers.firstIndex(where: { $0.id == id }) {
            return sleepers.remove(at: index).continuation
        }
        cancelledBeforeRegistering.insert(id)
        return nil
    }

    /// The sleeper whose turn is next, if its deadline is at or before `target`; moves `now`
    /// to its deadline. Without one, moves `now` to `target` and returns nil.
    mutating func popDue(upTo target: Duration) -> Sleeper? {
        if let first = sleepers.first, first.deadline <= target {
            sleepers.removeFirst()
            now = max(now, first.deadline)
            return first
        }
        now = max(now, target)
        return nil
    }

    /// A gate that opens when at least `count` sleepers are registered (open already if so).
    mutating func gate(whenSleeping count: Int) -> Gate {
        let gate = Gate()
        if sleepers.count >= count { gate.open() } else { countWaiters.append((count, gate)) }
        return gate
    }

    // MARK: - Taking turns to advance

    enum TurnAction {
        case go
        case wait
        case cancelled
    }

    /// An advancer asks for the turn: `.go` when nobody holds it (it holds it now), `.wait`
    /// when its continuation was queued, `.cancelled` when it was cancelled before asking.
    mutating func requestTurn(_ id: UInt64, _ continuation: UnsafeContinuation<Bool, Never>) -> TurnAction {
        if advancersCancelledBeforeRegistering.remove(id) != nil { return .cancelled }
        if !isAdvancing {
            isAdvancing = true
            return .go
        }
        advanceWaiters.append((id, continuation))
        return .wait
    }

    /// The holder gives the turn up: returns the next advancer to resume (with `true`), which
    /// now holds the turn, or nil (nobody holds it).
    mutating func releaseTurn() -> UnsafeContinuation<Bool, Never>? {
        precondition(isAdvancing, "Internal inconsistency: releaseTurn() while no advancer holds the turn")
        if advanceWaiters.isEmpty {
            isAdvancing = false
            return nil
        }
        return advanceWaiters.removeFirst().continuation
    }

    /// A waiting advancer was cancelled: returns its continuation (to resume with `false`) if
    /// it was still waiting. One that has not registered yet is remembered.
    mutating func cancelTurnRequest(_ id: UInt64) -> UnsafeContinuation<Bool, Never>? {
        if let index = advanceWaiters.firstIndex(where: { $0.id == id }) {
            return advanceWaiters.remove(at: index).continuation
        }
        advancersCancelledBeforeRegistering.insert(id)
        return nil
    }

    /// Forgets a turn request that finished (it got the turn, or was cancelled).
    mutating func forgetTurnRequest(_ id: UInt64) {
        advancersCancelledBeforeRegistering.remove(id)
    }

    /// Forgets a sleeper that finished without ever registering (it returned at once).
    mutating func forget(_ id: UInt64) {
        cancelledBeforeRegistering.remove(id)
    }
}
