/// The state of a ``ThrowingBroadcast``: subscribers, the replay buffer, the delivery queue,
/// the credit of waiting subscribers, and tasks waiting for subscribers or for room. A pure
/// value; the broadcast locks it, runs one event, releases the lock and acts on what it returned.
///
/// Delivery order: every fan-out (a sent element, a replay, the finish) is a *job*. Jobs are
/// decided under the lock in one order and run outside it by one deliverer at a time (whoever
/// found nobody delivering takes the role and drains the queue), so every consumer sees the same
/// order, and a consumer's `onDrop` may call back into the broadcast (its send is queued behind
/// the one being delivered).
@usableFromInline
struct BroadcastStateMachine<Element, Failure: Error> {
    @usableFromInline typealias Sink = CallbackStream<Element, Failure>.Sink
    @usableFromInline typealias YieldResult = CallbackStream<Element, Failure>.YieldResult
    @usableFromInline typealias Waiter = (id: UInt64, count: Int, continuation: UnsafeContinuation<Void, Never>)
    @usableFromInline typealias DemandHandler = @Sendable (Int) -> Void

    @usableFromInline
    enum Phase {
        /// Entered at creation. `send` fans out to subscribers. Left by `finish` (→ finished).
        case open
        /// Terminal: new subscribers get the replay, then the end at once; `send` is misuse.
        case finished(Failure?)
    }

    /// One fan-out, run outside the lock by the deliverer.
    @usableFromInline
    enum Job {
        /// Yield the element to these sinks (the subscribers when it was sent), in order.
        case send(Element, [Sink])
        /// Yield the replay to a new subscriber's sink.
        case replay([Element], Sink)
        /// Finish these sinks (the subscribers when the broadcast finished).
        case finish(Failure?, [Sink])
    }

    @usableFromInline var phase = Phase.open
    @usableFromInline var subscribers: [UInt64: Sink] = [:]
    /// Subscription order, so that fan-out order is stable.
    @usableFromInline var order: [UInt64] = []
    /// The sinks in subscription order, rebuilt only when subscribers change (a send only
    /// retains it).
    @usableFromInline var sinks: [Sink] = []
    /// Credit of each subscriber under a waiting policy: demand its stream reported, minus
    /// elements decided for it, never below zero (so it follows the stream's own count of
    /// demand, which an element sent beyond it does not use either). A send that leaves one at
    /// zero answers `.stopProducing`.
    @usableFromInline var credits: [(id: UInt64, credit: Int)] = []
    @usableFromInline var nextID: UInt64 = 0
    @usableFromInline let replayCount: Int
    @usableFromInline var replay: [Element] = []
    @usableFromInline var waiters: [Waiter] = []
    @usableFromInline var reportedSendAfterFinish = false

    /// Jobs decided and not yet run; `delivering` while a thread runs them.
    @usableFromInline var jobs = StreamRing<Job>()
    @usableFromInline var delivering = false

    /// The producer's demand handler and the demand reported to it not yet used by a send.
    @usableFromInline var demandHandler: DemandHandler?
    @usableFromInline var granted = 0
    /// `sendWhenReady` calls waiting for every waiting subscriber to have room.
    @usableFromInline var roomWaiters: [(id: UInt64, continuation: UnsafeContinuation<Void, Never>)] = []

    @inlinable
    init(replay: Int) { replayCount = replay }

    /// Credit the slowest waiting subscriber has (`Int.max` with none).
    @inlinable
    var available: Int {
        guard var lowest = credits.first?.credit else { return .max }
        for entry in credits where entry.credit < lowest { lowest = entry.credit }
        return Swift.max(lowest, 0)
    }

    @inlinable
    mutating func rebuildSinks() {
        sinks = order.compactMap { subscribers[$0] }
    }

    /// Queues `job`, or hands it back to run now if nobody is delivering (the caller then
    /// delivers, and drains the queue with `nextJob()`).
    @inlinable
    mutating func schedule(_ job: Job) -> Job? {
        if delivering {
            jobs.append(job, initialCapacity: 4, maximumCapacity: .max)
            return nil
        }
        delivering = true
        return job
    }

    /// The next job for the deliverer, or nil (and nobody is delivering any more).
    @inlinable
    mutating func nextJob() -> Job? {
        if let job = jobs.popFirst() { return job }
        delivering = false
        return nil
    }

    // MARK: - Send

    @usableFromInline
    enum SendAction {
        /// Deliver this job now (and drain the queue), then answer `result`.
        case deliver(Job, YieldResult)
        /// Queued behind the job being delivered: answer `result`.
        case queued(YieldResult)
        /// Finished: report misuse (once), answer `.terminated`.
        case reportSendAfterFinish
        /// Finished: answer `.terminated`.
        case terminated
    }

    @inlinable
    mutating func send(_ element: Element) -> SendAction {
        switch phase {
        case .open:
            if replayCount > 0 {
                if replay.count == replayCount { replay.removeFirst() }
                replay.append(element)
            }
            var full = false
            if !credits.isEmpty {
                for index in credits.indices {
                    let credit = credits[index].credit
                    if credit > 1 {
                        if credit != .max { credits[index].credit = credit - 1 }
                    } else {
                        credits[index].credit = 0
                        full = true
                    }
                }
            }
            if granted > 0 && granted != .max { granted -= 1 }
            let result: YieldResult = full ? .stopProducing : .enqueued
            if let job = schedule(.send(element, sinks)) { return .deliver(job, result) }
            return .queued(result)
        case .finished:
            if reportedSendAfterFinish { return .terminated }
            reportedSendAfterFinish = true
            return .reportSendAfterFinish
        }
    }

    /// `sendWhenReady`: sends if every waiting subscriber has room (or the broadcast is over);
    /// nil if the caller must wait for room first.
    @inlinable
    mutating func sendIfRoom(_ element: Element) -> SendAction? {
        if case .open = phase, available <= 0 { return nil }
        return send(element)
    }

    /// Whether the caller must wait (as `id`) for room: false if there is room now, or the
    /// broadcast is over.
    @inlinable
    mutating func waitForRoom(id: UInt64, _ continuation: UnsafeContinuation<Void, Never>) -> Bool {
        guard case .open = phase, available <= 0 else { return false }
        roomWaiters.append((id, continuation))
        return true
    }

    @inlinable
    mutating func cancelRoomWait(id: UInt64) -> UnsafeContinuation<Void, Never>? {
        guard let index = roomWaiters.firstIndex(where: { $0.id == id }) else { return nil }
        return roomWaiters.remove(at: index).continuation
    }

    /// After credit came back: the demand to report to the producer and the waiting senders to
    /// resume (they check again).
    @inlinable
    mutating func creditChanged() -> (demand: (DemandHandler, Int)?, senders: [UnsafeContinuation<Void, Never>]) {
        let available = self.available
        guard available > 0 else { return (nil, []) }
        let senders = roomWaiters.map(\.continuation)
        roomWaiters = []
        guard let handler = demandHandler, available > granted else { return (nil, senders) }
        let count = available == .max ? Int.max : available - granted
        granted = available
        return ((handler, count), senders)
    }

    /// A waiting subscriber's stream reported `count` more room.
    @inlinable
    mutating func subscriberDemand(_ id: UInt64, _ count: Int) -> (demand: (DemandHandler, Int)?, senders: [UnsafeContinuation<Void, Never>]) {
        guard case .open = phase, let index = credits.firstIndex(where: { $0.id == id }) else { return (nil, []) }
        let credit = credits[index].credit
        credits[index].credit = credit > Int.max - count ? Int.max : credit + count
        return creditChanged()
    }

    /// Installs the producer's demand handler; returns the demand to report at once, if any.
    @inlinable
    mutating func registerDemand(_ handler: @escaping DemandHandler) -> (initial: Int?, replaced: DemandHandler?) {
        guard case .open = phase else { return (nil, nil) }
        let replaced = demandHandler
        demandHandler = handler
        let available = self.available
        granted = available
        return (available > 0 ? available : nil, replaced)
    }

    // MARK: - Finish

    @usableFromInline
    struct FinishAction {
        @usableFromInline var job: Job?
        @usableFromInline var waiters: [UnsafeContinuation<Void, Never>]
        @usableFromInline var senders: [UnsafeContinuation<Void, Never>]
        @usableFromInline var released: (DemandHandler?, [UInt64: Sink])

        @inlinable
        init(job: Job?, waiters: [UnsafeContinuation<Void, Never>], senders: [UnsafeContinuation<Void, Never>], released: (DemandHandler?, [UInt64: Sink])) {
            self.job = job
            self.waiters = waiters
            self.senders = senders
            self.released = released
        }
    }

    /// Returns what to do outside the lock, or nil if already finished.
    @inlinable
    mutating func finish(_ failure: Failure?) -> FinishAction? {
        guard case .open = phase else { return nil }
        phase = .finished(failure)
        let job = schedule(.finish(failure, sinks))
        let released = (demandHandler, subscribers)
        demandHandler = nil
        subscribers = [:]
        order = []
        sinks = []
        credits = []
        defer {
            waiters = []
            roomWaiters = []
        }
        return FinishAction(job: job, waiters: waiters.map(\.continuation), senders: roomWaiters.map(\.continuation), released: released)
    }

    // MARK: - Subscribe

    @usableFromInline
    enum SubscribeAction {
        /// Subscribed as `id`: deliver `job` (the replay) if given, resume `waiters`.
        case subscribed(id: UInt64, job: Job?, waiters: [UnsafeContinuation<Void, Never>])
        /// Finished: yield `replay`, then finish the sink with the failure.
        case finished(replay: [Element], Failure?)
    }

    @inlinable
    mutating func subscribe(_ sink: Sink, waiting: Bool) -> SubscribeAction {
        switch phase {
        case .open:
            nextID &+= 1
            subscribers[nextID] = sink
            order.append(nextID)
            rebuildSinks()
            // No credit until its stream reports the room it has (when the builder registers).
            if waiting { credits.append((nextID, 0)) }
            var ready: [UnsafeContinuation<Void, Never>] = []
            waiters.removeAll { waiter in
                guard subscribers.count >= waiter.count else { return false }
                ready.append(waiter.continuation)
                return true
            }
            let job = replay.isEmpty ? nil : schedule(.replay(replay, sink))
            return .subscribed(id: nextID, job: job, waiters: ready)
        case .finished(let failure):
            return .finished(replay: replay, failure)
        }
    }

    @usableFromInline
    struct UnsubscribeAction {
        @usableFromInline var removed: Sink?
        @usableFromInline var demand: (DemandHandler, Int)?
        @usableFromInline var senders: [UnsafeContinuation<Void, Never>]

        @inlinable
        init(removed: Sink?, demand: (DemandHandler, Int)?, senders: [UnsafeContinuation<Void, Never>]) {
            self.removed = removed
            self.demand = demand
            self.senders = senders
        }
    }

    /// The subscriber's stream ended: it no longer holds the producer back.
    @inlinable
    mutating func unsubscribe(_ id: UInt64) -> UnsubscribeAction {
        guard let sink = subscribers.removeValue(forKey: id) else { return UnsubscribeAction(removed: nil, demand: nil, senders: []) }
        order.removeAll { $0 == id }
        rebuildSinks()
        guard let index = credits.firstIndex(where: { $0.id == id }) else { return UnsubscribeAction(removed: sink, demand: nil, senders: []) }
        credits.remove(at: index)
        let (demand, senders) = creditChanged()
        return UnsubscribeAction(removed: sink, demand: demand, senders: senders)
    }

    // MARK: - Waiting for subscribers

    /// Returns false if `count` subscribers are already there (or the broadcast finished): don't wait.
    @inlinable
    mutating func wait(id: UInt64, count: Int, _ continuation: UnsafeContinuation<Void, Never>) -> Bool {
        guard case .open = phase, subscribers.count < count else { return false }
        waiters.append((id, count, continuation))
        return true
    }

    @inlinable
    mutating func cancelWait(id: UInt64) -> UnsafeContinuation<Void, Never>? {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return waiters.remove(at: index).continuation
    }

    @inlinable
    var isFinished: Bool {
        if case .finished = phase { true } else { false }
    }
}
