/// The state of a ``Broadcast``: subscribers, the replay buffer, and tasks waiting for
/// subscribers. A pure value; ``Broadcast`` locks it and acts on what its events return.
@usableFromInline
struct BroadcastStateMachine<Element> {
    @usableFromInline typealias Sink = CallbackStream<Element, Never>.Sink
    @usableFromInline typealias Waiter = (id: UInt64, count: Int, continuation: UnsafeContinuation<Void, Never>)

    @usableFromInline
    enum Phase {
        /// Entered at creation. `send` fans out to subscribers. Left by `finish` (→ finished).
        case open
        /// Terminal: new subscribers get the replay, then finish at once; `send` is misuse.
        case finished
    }

    @usableFromInline var phase = Phase.open
    @usableFromInline var subscribers: [UInt64: Sink] = [:]
    /// Subscription order, so that fan-out order is stable.
    @usableFromInline var order: [UInt64] = []
    @usableFromInline var nextID: UInt64 = 0
    @usableFromInline let replayCount: Int
    @usableFromInline var replay: [Element] = []
    @usableFromInline var waiters: [Waiter] = []
    @usableFromInline var reportedSendAfterFinish = false

    @inlinable
    init(replay: Int) { replayCount = replay }

    // MARK: - Send

    @usableFromInline
    enum SendAction {
        /// Yield the element to these sinks (in subscription order).
        case fanOut([Sink])
        /// Finished: report misuse (once).
        case reportSendAfterFinish
        case none
    }

    @inlinable
    mutating func send(_ element: Element) -> SendAction {
        switch phase {
        case .open:
            if replayCount > 0 {
                if replay.count == replayCount { replay.removeFirst() }
                replay.append(element)
            }
            return .fanOut(order.compactMap { subscribers[$0] })
        case .finished:
            if reportedSendAfterFinish { return .none }
            reportedSendAfterFinish = true
            return .reportSendAfterFinish
        }
    }

    // MARK: - Finish

    /// Returns the sinks to finish (outside the lock), or nil if already finished.
    @inlinable
    mutating func finish() -> [Sink]? {
        guard case .open = phase else { return nil }
        phase = .finished
        let sinks = order.compactMap { subscribers[$0] }
        subscribers = [:]
        order = []
        return sinks
    }

    // MARK: - Subscribe

    @usableFromInline
    enum SubscribeAction {
        /// Subscribed as `id`: yield `replay` first, resume `waiters`.
        case subscribed(id: UInt64, replay: [Element], waiters: [UnsafeContinuation<Void, Never>])
        /// Finished: yield `replay`, then finish the sink.
        case finished(replay: [Element])
    }

    @inlinable
    mutating func subscribe(_ sink: Sink) -> SubscribeAction {
        switch phase {
        case .open:
            nextID &+= 1
            subscribers[nextID] = sink
            order.append(nextID)
            var ready: [UnsafeContinuation<Void, Never>] = []
            waiters.removeAll { waiter in
                guard subscribers.count >= waiter.count else { return false }
                ready.append(waiter.continuation)
                return true
            }
            return .subscribed(id: nextID, replay: replay, waiters: ready)
        case .finished:
            return .finished(replay: replay)
        }
    }

    /// Returns the removed sink, to be released outside the lock.
    @inlinable
    mutating func unsubscribe(_ id: UInt64) -> Sink? {
        guard let sink = subscribers.removeValue(forKey: id) else { return nil }
        order.removeAll { $0 == id }
        return sink
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
    mutating func takeAllWaiters() -> [UnsafeContinuation<Void, Never>] {
        defer { waiters = [] }
        return waiters.map(\.continuation)
    }
}
