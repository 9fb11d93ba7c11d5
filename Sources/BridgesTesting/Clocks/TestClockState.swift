/// The pure state of a ``TestClock``: virtual now and the sleepers, kept sorted by deadline
/// and, for equal deadlines, by the order in which they started sleeping.
@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
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
    /// Sorted by (deadline, id): ids grow in scheduling order, so equal deadlines stay FIFO.
    private(set) var sleepers: [Sleeper] = []
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

    /// Forgets a sleeper that finished without ever registering (it returned at once).
    mutating func forget(_ id: UInt64) {
        cancelledBeforeRegistering.remove(id)
    }
}
