/// The state of a ``ThrowingBroadcast``: subscribers, the replay buffer, the credit of waiting
/// subscribers, and tasks waiting for subscribers or for room. A pure value; the broadcast locks
/// it, runs one event, and in the same critical section decides the resulting yields and finishes
/// into the subscribers' streams (see `Outbox`), then releases the lock and acts.
///
/// Generic over the subscriber (a stream's sink) and the continuation of a waiting task, so that
/// tests can drive it with stand-ins and explore its events exhaustively.
///
/// Bounded work: no event does more than its own decision. A send fans out its own element to
/// the subscribers of the moment; a subscription takes its own replay; nothing is queued for
/// another caller to deliver.
@usableFromInline
struct BroadcastStateMachine<Element, Failure: Error, Sink, Continuation> {
    @usableFromInline typealias YieldResult = CallbackStream<Element, Failure>.YieldResult
    @usableFromInline typealias DemandHandler = @Sendable (Int) -> Void

    @usableFromInline
    enum Phase {
        /// Entered at creation. `send` fans out to subscribers. Left by `finish` (→ finished).
        case open
        /// Terminal: new subscribers get the replay, then the end at once; `send` is misuse.
        case finished(Failure?)
    }

    @usableFromInline var phase = Phase.open
    /// The subscribers in subscription order, the order of every fan-out.
    @usableFromInline var subscribers: [(id: UInt64, sink: Sink)] = []
    /// Credit of each subscriber under a waiting policy: demand its stream reported, minus
    /// elements decided for it, never below zero (so it follows the stream's own count of
    /// demand, which an element sent beyond it does not use either). A send that leaves one at
    /// zero answers `.stopProducing`.
    @usableFromInline var credits: [(id: UInt64, credit: Int)] = []
    @usableFromInline var nextID: UInt64 = 0
    @usableFromInline let replayCount: Int
    @usableFromInline var replay: [Element] = []
    /// `waitForSubscribers` calls, each until `count` subscribers are there.
    @usableFromInline var waiters: [(id: UInt64, count: Int, continuation: Continuation)] = []

    /// The producer's demand handler and the demand reported to it not yet used by a send.
    @usableFromInline var demandHandler: DemandHandler?
    @usableFromInline var granted = 0
    /// `send` calls waiting for every waiting subscriber to have room.
    @usableFromInline var roomWaiters: [(id: UInt64, continuation: Continuation)] = []
    /// The task that pulls this broadcast's elements from an upstream (`shared()`'s iteration),
    /// waiting for every waiting subscriber to have room. At most one: one iteration at a time
    /// sends into a broadcast. Its own slot, not a `roomWaiters` entry: no id and no array
    /// per wait on that per-element path.
    @usableFromInline var puller: Continuation?

    @inlinable
    init(replay: Int) { replayCount = replay }

    /// Credit the slowest waiting subscriber has (`Int.max` with none).
    @inlinable
    var available: Int {
        guard var lowest = credits.first?.credit else { return .max }
        for entry in credits where entry.credit < lowest { lowest = entry.credit }
        return Swift.max(lowest, 0)
    }

    // MARK: - Send

    @usableFromInline
    enum YieldAction {
        /// Yield the element to every subscriber in `subscribers` now, in this critical section;
        /// answer `result`. `evicted` left the replay buffer: release it after the lock.
        case fanOut(YieldResult, evicted: Element?)
        /// Finished: report the misuse (the ledger delivers the first and counts the rest), answer
        /// `.terminated`.
        case reportSendAfterFinish
        /// An `await send` that waited for room found the broadcast finished when it resumed: its
        /// element reached nobody, by no mistake of the producer (no report); answer `.terminated`.
        case finishedWhileWaiting
    }

    @inlinable
    mutating func yield(_ element: Element) -> YieldAction {
        switch phase {
        case .open:
            var evicted: Element?
            if replayCount > 0 {
                if replay.count == replayCount { evicted = replay.removeFirst() }
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
            if full {
                // The producer is told to stop: whatever demand it heard before is spent, so the
                // next room any waiting subscriber makes is reported to it (even after `Int.max`,
                // heard while no waiting subscriber held it back).
                granted = 0
            } else if granted > 0 && granted != .max {
                granted -= 1
            }
            return .fanOut(full ? .stopProducing : .enqueued, evicted: evicted)
        case .finished:
            return .reportSendAfterFinish  // every time: the ledger reports the first and counts the rest
        }
    }

    /// `send`: sends if every waiting subscriber has room (or the broadcast is over);
    /// nil if the caller must wait for room first.
    @inlinable
    mutating func sendIfRoom(_ element: Element) -> YieldAction? {
        if case .open = phase, available <= 0 { return nil }
        return yield(element)
    }

    /// `send` once its wait for room ended (room came, the broadcast finished, or its task was
    /// cancelled). Finished: `.finishedWhileWaiting`, its element reached nobody. Cancelled: the
    /// element goes out now, past a full subscriber (nothing is lost). Otherwise as
    /// ``sendIfRoom(_:)``: nil if the room was taken meanwhile and the caller waits again.
    @inlinable
    mutating func sendOnceWoken(_ element: Element, cancelled: Bool) -> YieldAction? {
        if case .finished = phase { return .finishedWhileWaiting }
        return cancelled ? yield(element) : sendIfRoom(element)
    }

    /// What `send` answers for the `action` that ``sendIfRoom(_:)`` or
    /// ``sendOnceWoken(_:cancelled:)`` decided. An element that went out answers `.enqueued`
    /// (a send returns once its subscribers had room, so a waiting subscriber left full needs no
    /// pause signal), or `.stopProducing` if the send's task was cancelled while it waited (it
    /// went past a full subscriber); one that reached nobody answers `.terminated`.
    @inlinable
    static func answer(toSend action: YieldAction, cancelled: Bool) -> YieldResult {
        switch action {
        case .fanOut: cancelled ? .stopProducing : .enqueued
        case .reportSendAfterFinish, .finishedWhileWaiting: .terminated
        }
    }

    /// Whether the caller must wait (as `id`) for room: false if there is room now, or the
    /// broadcast is over.
    @inlinable
    mutating func waitForRoom(id: UInt64, _ continuation: Continuation) -> Bool {
        guard case .open = phase, available <= 0 else { return false }
        roomWaiters.append((id, continuation))
        return true
    }

    /// Whether the pulling task must wait for room (its continuation kept until room comes,
    /// the broadcast finishes or the wait is cancelled): false if there is room now, or the
    /// broadcast is over.
    @inlinable
    mutating func waitToPull(_ continuation: Continuation) -> Bool {
        guard case .open = phase, available <= 0 else { return false }
        precondition(puller == nil, "Internal inconsistency: two tasks pull elements for one broadcast")
        puller = continuation
        return true
    }

    /// The pulling task's wait is cancelled: its continuation, if it still waits.
    @inlinable
    mutating func cancelPull() -> Continuation? {
        defer { puller = nil }
        return puller
    }

    @inlinable
    mutating func cancelRoomWait(id: UInt64) -> Continuation? {
        guard let index = roomWaiters.firstIndex(where: { $0.id == id }) else { return nil }
        return roomWaiters.remove(at: index).continuation
    }

    /// What room that came back wakes: the demand to report to the producer, the waiting
    /// senders and the pulling task to resume (they check again).
    @usableFromInline
    struct RoomAction {
        @usableFromInline var demand: (DemandHandler, Int)?
        @usableFromInline var senders: [Continuation]
        @usableFromInline var puller: Continuation?

        @inlinable
        init(demand: (DemandHandler, Int)? = nil, senders: [Continuation] = [], puller: Continuation? = nil) {
            self.demand = demand
            self.senders = senders
            self.puller = puller
        }
    }

    /// After credit came back: what it wakes.
    @inlinable
    mutating func creditChanged() -> RoomAction {
        let available = self.available
        guard available > 0 else { return RoomAction() }
        var action = RoomAction(puller: puller)
        puller = nil
        if !roomWaiters.isEmpty {
            action.senders = roomWaiters.map(\.continuation)
            roomWaiters.removeAll(keepingCapacity: true)
        }
        guard let handler = demandHandler, available > granted else { return action }
        action.demand = (handler, available == .max ? Int.max : available - granted)
        granted = available
        return action
    }

    /// A waiting subscriber's stream reported `count` more room.
    @inlinable
    mutating func subscriberDemand(_ id: UInt64, _ count: Int) -> RoomAction {
        guard case .open = phase, let index = credits.firstIndex(where: { $0.id == id }) else { return RoomAction() }
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
        /// Finish each of these now, in this critical section; release them after the lock.
        @usableFromInline var subscribers: [(id: UInt64, sink: Sink)]
        @usableFromInline var waiters: [Continuation]
        @usableFromInline var senders: [Continuation]
        /// Released after the lock.
        @usableFromInline var demandHandler: DemandHandler?

        @inlinable
        init(
            subscribers: [(id: UInt64, sink: Sink)], waiters: [Continuation], senders: [Continuation],
            demandHandler: DemandHandler?
        ) {
            self.subscribers = subscribers
            self.waiters = waiters
            self.senders = senders
            self.demandHandler = demandHandler
        }
    }

    /// Returns what to do, or nil if already finished.
    @inlinable
    mutating func finish(_ failure: Failure?) -> FinishAction? {
        guard case .open = phase else { return nil }
        phase = .finished(failure)
        defer {
            subscribers = []
            credits = []
            demandHandler = nil
            waiters = []
            roomWaiters = []
            puller = nil
        }
        return FinishAction(
            subscribers: subscribers,
            waiters: waiters.map(\.continuation),
            senders: roomWaiters.map(\.continuation) + (puller.map { [$0] } ?? []),  // rare: once per broadcast
            demandHandler: demandHandler
        )
    }

    // MARK: - Subscribe

    @usableFromInline
    enum SubscribeAction {
        /// Subscribed as `id`: yield `replay` to the new sink now, in this critical section
        /// (before any later send can reach it); resume `waiters` after the lock.
        case subscribed(id: UInt64, replay: [Element], waiters: [Continuation])
        /// Finished: yield `replay` to the sink, then finish it with the failure.
        case finished(replay: [Element], Failure?)
    }

    @inlinable
    mutating func subscribe(_ sink: Sink, waiting: Bool) -> SubscribeAction {
        switch phase {
        case .open:
            nextID &+= 1
            subscribers.append((nextID, sink))
            // No credit until its stream reports the room it has (when the builder registers).
            if waiting { credits.append((nextID, 0)) }
            var ready: [Continuation] = []
            waiters.removeAll { waiter in
                guard subscribers.count >= waiter.count else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return .subscribed(id: nextID, replay: replay, waiters: ready)
        case .finished(let failure):
            return .finished(replay: replay, failure)
        }
    }

    @usableFromInline
    struct UnsubscribeAction {
        /// Released after the lock.
        @usableFromInline var removed: Sink?
        /// What the room it leaves wakes.
        @usableFromInline var room: RoomAction

        @inlinable
        init(removed: Sink?, room: RoomAction) {
            self.removed = removed
            self.room = room
        }
    }

    /// The subscriber's stream ended: it no longer holds the producer back.
    @inlinable
    mutating func unsubscribe(_ id: UInt64) -> UnsubscribeAction {
        guard let position = subscribers.firstIndex(where: { $0.id == id }) else {
            return UnsubscribeAction(removed: nil, room: RoomAction())
        }
        let sink = subscribers.remove(at: position).sink
        guard let index = credits.firstIndex(where: { $0.id == id }) else {
            return UnsubscribeAction(removed: sink, room: RoomAction())
        }
        credits.remove(at: index)
        return UnsubscribeAction(removed: sink, room: creditChanged())
    }

    // MARK: - Waiting for subscribers

    /// Returns false if `count` subscribers are already there (or the broadcast finished): don't wait.
    @inlinable
    mutating func wait(id: UInt64, count: Int, _ continuation: Continuation) -> Bool {
        guard case .open = phase, subscribers.count < count else { return false }
        waiters.append((id, count, continuation))
        return true
    }

    @inlinable
    mutating func cancelWait(id: UInt64) -> Continuation? {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        return waiters.remove(at: index).continuation
    }

    @inlinable
    var isFinished: Bool {
        if case .finished = phase { true } else { false }
    }
}
