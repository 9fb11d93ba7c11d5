/// A hot, multicast source that never fails: ``ThrowingBroadcast`` with `Failure == Never`.
///
/// For a source that can fail, use `ThrowingBroadcast<Element, any Error>` (or a typed failure)
/// and `finish(throwing:)`.
public typealias Broadcast<Element: Sendable> = ThrowingBroadcast<Element, Never>

/// A hot, multicast source for events a delegate owns: the delegate sends, and any number of
/// consumers each take their own ``CallbackStream`` with their own buffering policy.
///
/// ```swift
/// final class LocationProxy: LegacyLocationDelegate {
///     let locations = Broadcast<Location>(replay: 1)
///     func locationManager(_ manager: LegacyLocationManager, didUpdate location: Location) {
///         locations.yield(location)
///     }
///     func locationManager(_ manager: LegacyLocationManager, didFailWithError error: Error) {}
/// }
///
/// func showOnMap(_ proxy: LocationProxy) async {
///     for await location in proxy.locations.stream(buffering: .latest) { print(location) }     // a map view
/// }
/// func recordTrack(_ proxy: LocationProxy) async {
///     for await location in proxy.locations.stream(buffering: .unbounded) { print(location) }  // a track recorder
/// }
/// ```
///
/// - A consumer subscribes when it starts iterating (its first `next()`), and sees every element
///   sent after that, delivered per its own policy (one slow lossy consumer never makes another
///   lose anything). With `replay: n` it first receives the last n elements sent before it
///   subscribed.
/// - One order: every consumer sees the elements in the same order, even when sends from
///   several threads race with each other and with subscriptions.
/// - Nothing runs under the broadcast's lock: it decides there (who receives what, in which
///   order, into each consumer's buffer), then resumes consumers and calls handlers after
///   releasing it. So a consumer's `onDrop` may call back into the broadcast (read
///   ``subscriberCount``, even ``yield(_:fileID:line:)``: that element is delivered right after).
/// - Bounded work: a `yield` or `send` delivers its own element to the consumers of the moment, a new
///   consumer's first `next()` takes its own replay, and neither ever delivers other threads'
///   elements, however fast they send.
/// - Backpressure: subscribers under a waiting policy (`.rendezvous`, `.suspending(n)`) hold the
///   producer back. `await` ``send(_:isolation:fileID:line:)`` waits until the slowest of them has room;
///   ``yield(_:fileID:line:)`` never waits, delivers anyway (nothing is lost) and answers
///   `.stopProducing` when one of them is full; the producer resumes through ``onDemand(_:)``
///   (the same shape as ``CallbackStream/Sink/onDemand(_:)``, and ``DemandGate`` works with it).
/// - After ``finish()`` (or ``finish(throwing:)``), current consumers receive what they buffered
///   and then the end; a late subscriber receives the replay (if any) and the end at once.
/// - A consumer that breaks out, is cancelled or drops its iterator unsubscribes (teardown), and
///   no longer holds the producer back.
/// - Consumers' streams do not keep the broadcast alive: when its owner (the delegate proxy)
///   releases it, it finishes, and so do its consumers.
public final class ThrowingBroadcast<Element: Sendable, Failure: Error>: Sendable {
    @usableFromInline typealias Sink = CallbackStream<Element, Failure>.Sink
    @usableFromInline typealias Machine = BroadcastStateMachine<Element, Failure, Sink, UnsafeContinuation<Void, Never>>
    public typealias YieldResult = CallbackStream<Element, Failure>.YieldResult

    @usableFromInline let state: LockedState<Machine>
    @usableFromInline let site: CallSite

    /// - Parameters:
    ///   - replay: How many of the most recent elements a new subscriber receives first.
    ///   - line: Call site reported with any misuse; leave the default.
    ///   - fileID: Call site reported with any misuse; leave the default.
    /// - Precondition: `replay >= 0`; otherwise the program stops with a message naming the
    ///   argument and the call's file and line, in every build configuration.
    public init(replay: Int = 0, fileID: String = #fileID, line: UInt = #line) {
        if replay < 0 {
            _argumentError("Broadcast(replay:): replay must be ≥ 0, got \(replay)", fileID: fileID, line: line)
        }
        state = LockedState(Machine(replay: replay))
        site = CallSite(fileID: fileID, line: line)
    }

    /// Releasing the broadcast ends it: its consumers end after what they have buffered. A
    /// broadcast that can fail and was never finished ends them with ``BridgeError/sinkDropped``
    /// (as a `MyError` that conforms to ``BridgeErrorConvertible``): its producer was lost, so
    /// their loops must not read as complete. A `Broadcast<Element>` (`Never`) finishes them
    /// normally, and so does a typed `Failure` that cannot carry the error.
    deinit { end(BridgeError.sinkDropped.asFailure(Failure.self)) }

    /// Offers `element` to every current subscriber, each through its own policy, synchronously
    /// on this thread: consumers that were waiting are resumed, and `onDrop` handlers called,
    /// before it returns. Never blocks and never suspends, like ``CallbackStream/Sink/yield(_:fileID:line:)``.
    ///
    /// - Returns: `.enqueued`; `.stopProducing` when a subscriber under a waiting policy is now
    ///   full (the element was still delivered: pause until ``onDemand(_:)`` says so, or `await`
    ///   ``send(_:isolation:fileID:line:)``); `.terminated` after ``finish()`` (the element is discarded and
    ///   the misuse reported once, at this call's `fileID`/`line`).
    @inlinable
    @discardableResult
    public func yield(_ element: Element, fileID: String = #fileID, line: UInt = #line) -> YieldResult {
        var outbox = Outbox<Element, Failure>()
        let action = state.withLock { machine in
            let action = machine.yield(element)
            Self.fanOut(&machine, element, action, into: &outbox)
            return action
        }
        outbox.perform()
        return act(action, fileID: fileID, line: line)
    }

    /// Offers `element` to every current subscriber once every subscriber under a waiting policy
    /// has room for it, suspending until then, like ``CallbackStream/Sink/send(_:isolation:fileID:line:)``:
    /// a producer that awaits this never runs more than the slowest waiting subscriber's capacity
    /// ahead of it. With no such subscriber it returns at once. It runs in the caller's isolation
    /// (a producer actor, the main actor): consumers are resumed and `onDrop` handlers called
    /// there, with no hop off it.
    ///
    /// - Returns: `.enqueued` once the element was delivered (as a stream sink's `await send`
    ///   answers: a producer that awaits each send needs no pause signal), `.dropped` for a
    ///   lossy subscriber's drop, `.terminated` if the broadcast was finished before the element
    ///   was delivered (it reached nobody; a send that was waiting when ``finish()`` came is not
    ///   reported as misuse). If the calling task is cancelled while it waits, the element is
    ///   delivered anyway (nothing is lost) and the result is `.stopProducing`, or `.terminated`
    ///   if the broadcast had finished meanwhile.
    @discardableResult
    public func send(
        _ element: Element,
        isolation: isolated (any Actor)? = #isolation,
        fileID: String = #fileID,
        line: UInt = #line
    ) async -> YieldResult {
        var waited = false
        var cancelled = false
        while true {
            var outbox = Outbox<Element, Failure>()
            let action = state.withLock { machine -> Machine.YieldAction? in
                guard
                    let action = waited
                        ? machine.sendOnceWoken(element, cancelled: cancelled) : machine.sendIfRoom(element)
                else { return nil }
                Self.fanOut(&machine, element, action, into: &outbox)
                return action
            }
            if let action {
                outbox.perform()
                _ = act(action, fileID: fileID, line: line)  // releases what the replay evicted; reports a misuse
                return Machine.answer(toSend: action, cancelled: cancelled)
            }
            await waitForRoom(isolation: isolation)
            waited = true
            cancelled = Task.isCancelled
        }
    }

    /// Suspends until every subscriber under a waiting policy has room for one more element
    /// (at once with none, or after ``finish()``), or the calling task is cancelled: the wait of
    /// ``send(_:isolation:fileID:line:)``, any number of which may wait at once.
    func waitForRoom(isolation: isolated (any Actor)? = #isolation) async {
        // Room now: no suspension. Otherwise an id from the subscribers' counter (ids of room
        // waiters live in their own list), under the same lock: no random number per wait.
        guard
            let id = state.withLock({ machine -> UInt64? in
                if machine.isFinished || machine.available > 0 { return nil }
                machine.nextID &+= 1
                return machine.nextID
            })
        else { return }
        await withTaskCancellationHandler {
            await withUnsafeContinuation(isolation: isolation) { (continuation: UnsafeContinuation<Void, Never>) in
                if !state.withLock({ $0.waitForRoom(id: id, continuation) }) {
                    continuation.resume()
                } else if Task.isCancelled {
                    state.withLock { $0.cancelRoomWait(id: id) }?.resume()
                }
            }
        } onCancel: {
            state.withLock { $0.cancelRoomWait(id: id) }?.resume()
        }
    }

    /// Suspends until every subscriber under a waiting policy has room for one more element (at
    /// once with none, or after ``finish()``), or the calling task is cancelled: the wait of the
    /// one task that pulls this broadcast's elements from an upstream (``SharedSequence``'s
    /// iteration). One lock pair when there is room; otherwise its continuation waits in the
    /// broadcast's state until a subscriber's stream reports room (or the broadcast finishes).
    func waitToPull(isolation: isolated (any Actor)? = #isolation) async {
        guard state.withLock({ !$0.isFinished && $0.available <= 0 }) else { return }
        await withTaskCancellationHandler {
            await withUnsafeContinuation(isolation: isolation) { (continuation: UnsafeContinuation<Void, Never>) in
                if !state.withLock({ $0.waitToPull(continuation) }) {
                    continuation.resume()
                } else if Task.isCancelled {
                    state.withLock { $0.cancelPull() }?.resume()
                }
            }
        } onCancel: {
            state.withLock { $0.cancelPull() }?.resume()
        }
    }

    /// Ends every subscriber's stream (after what it has buffered) and every later subscription.
    /// A second call does nothing. Waiters of ``waitForSubscribers(_:)`` resume.
    public func finish() { end(nil) }

    /// Ends every subscriber's stream with `error` (after what it has buffered), and every later
    /// subscription. A second call does nothing.
    public func finish(throwing error: Failure) { end(error) }

    /// Registers `handler`, told how many more elements every subscriber under a waiting policy
    /// can take now (credits, as ``CallbackStream/Sink/onDemand(_:)``): at registration, then
    /// each time the slowest of them makes room. With no such subscriber: `Int.max`, once (and
    /// again when the last one leaves). Called never under a lock, on the thread where room
    /// appeared: a consumer's as it takes a buffered element, or the sender's own, inside its
    /// `yield` or `send`, when the element went straight to a consumer waiting for it (which
    /// leaves that consumer's buffer as empty as before). It replaces any handler registered before.
    public func onDemand(_ handler: @escaping @Sendable (Int) -> Void) {
        let (initial, replaced) = state.withLock { $0.registerDemand(handler) }
        withExtendedLifetime(replaced) {}  // released outside the lock
        if let initial { handler(initial) }
    }

    /// Whether ``finish()`` has been called.
    public var isFinished: Bool {
        state.withLock { $0.isFinished }
    }

    /// How many consumers are subscribed now.
    public var subscriberCount: Int {
        state.withLock { $0.subscribers.count }
    }

    /// Suspends until at least `count` consumers are subscribed (or the broadcast finished, or
    /// the calling task is cancelled), so a producer can start only once everyone listens.
    public func waitForSubscribers(_ count: Int) async {
        let id = UInt64.random(in: 1...UInt64.max)
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                if !state.withLock({ $0.wait(id: id, count: count, continuation) }) {
                    continuation.resume()
                } else if Task.isCancelled {
                    state.withLock { $0.cancelWait(id: id) }?.resume()
                }
            }
        } onCancel: {
            state.withLock { $0.cancelWait(id: id) }?.resume()
        }
    }

    /// A new consumer's stream: subscribes when iteration starts, unsubscribes at teardown.
    ///
    /// - Parameters:
    ///   - buffering: This consumer's policy for elements it has not taken yet. A waiting policy
    ///     holds the producer back (see ``send(_:isolation:fileID:line:)``).
    ///   - onDrop: Called with each element this consumer's policy drops, on the thread that
    ///     sent it (or, for the replay, that subscribed), never under a lock (it may call back into the broadcast).
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
        // Weak: a consumer's stream does not keep the source alive; when its owner releases the
        // broadcast, it finishes (deinit) and its consumers end instead of waiting forever.
        return CallbackStream.synchronous(
            buffering: buffering, onDrop: onDrop, onUndelivered: onUndelivered, fileID: fileID, line: line
        ) {
            [weak self] (sink: CallbackStream<Element, Failure>.Sink) -> Cancellation in
            guard let self else {
                sink.finish()
                return Cancellation()
            }
            return subscribe(sink, waiting: waiting)
        }
    }

    /// Subscribes a consumer's stream as it starts (its builder), and returns its teardown: the
    /// replay first, then every element sent; after ``finish()``, the replay and the end at once.
    /// ``SharedSequence`` subscribes its consumers' streams to the upstream's current broadcast
    /// through this too.
    func subscribe(_ sink: CallbackStream<Element, Failure>.Sink, waiting: Bool) -> Cancellation {
        // The replay is decided into the new stream in the critical section that publishes it
        // to senders: it comes before any live element, and this call delivers nothing else.
        var outbox = Outbox<Element, Failure>()
        let action = state.withLock { machine in
            let action = machine.subscribe(sink, waiting: waiting)
            if case .subscribed(_, let replay, _) = action {
                for element in replay { outbox.decideYield(element, to: sink) }
            }
            return action
        }
        outbox.perform()
        switch action {
        case .subscribed(let id, _, let waiters):
            for waiter in waiters { waiter.resume() }
            if waiting {
                // Registered after the replay, so the room it reports counts it. Weak: the
                // stream keeps its demand handler until it ends.
                sink.onDemand { [weak self] count in self?.subscriberDemand(id, count) }
            }
            return Cancellation { [weak self] in self?.unsubscribe(id) }
        case .finished(let replay, let failure):
            for element in replay { sink.yield(element) }  // nobody else reaches this sink
            if let failure { sink.finish(throwing: failure) } else { sink.finish() }
            return Cancellation()
        }
    }

    // MARK: - Acting outside the lock

    /// Under the lock: decides the fan-out of a send into every subscriber's stream, in
    /// subscription order, so every subscriber sees the sends in the order of their critical
    /// sections.
    @inlinable
    static func fanOut(
        _ machine: inout Machine, _ element: Element, _ action: Machine.YieldAction,
        into outbox: inout Outbox<Element, Failure>
    ) {
        guard case .fanOut = action else { return }
        for subscriber in machine.subscribers { outbox.decideYield(element, to: subscriber.sink) }
    }

    /// After the lock (and after the send's outbox was performed): releases what the send evicted
    /// from the replay buffer, reports misuse, and answers.
    @inlinable
    func act(_ action: Machine.YieldAction, fileID: String, line: UInt) -> YieldResult {
        switch action {
        case .fanOut(let result, let evicted):
            withExtendedLifetime(evicted) {}  // released here, outside the lock
            return result
        case .finishedWhileWaiting:
            return .terminated
        case .reportSendAfterFinish:
            site.report(
                .yieldAfterFinish,
                "an element was yielded or sent to a Broadcast after finish(); it was discarded. Stop sending once "
                    + "the broadcast is finished (yield answers .terminated; isFinished tells), or make a new Broadcast "
                    + "for a new run of the source.",
                bridge: self, at: fileID, line: line
            )
            return .terminated
        }
    }

    private func end(_ failure: Failure?) {
        var outbox = Outbox<Element, Failure>()
        let decided = state.withLock { machine -> Machine.FinishAction? in
            guard let action = machine.finish(failure) else { return nil }
            for subscriber in action.subscribers { outbox.decideFinish(failure, to: subscriber.sink) }
            return action
        }
        guard let action = decided else { return }
        for waiter in action.waiters { waiter.resume() }
        for sender in action.senders { sender.resume() }
        outbox.perform()
        withExtendedLifetime(action) {}  // the sinks and the demand handler, released outside the lock
    }

    private func subscriberDemand(_ id: UInt64, _ count: Int) {
        wake(state.withLock { $0.subscriberDemand(id, count) })
    }

    private func unsubscribe(_ id: UInt64) {
        let action = state.withLock { $0.unsubscribe(id) }
        wake(action.room)
        withExtendedLifetime(action.removed) {}  // released outside the lock
    }

    /// After the lock: resumes what room that came back wakes, and reports it to the producer.
    private func wake(_ room: Machine.RoomAction) {
        room.puller?.resume()
        for sender in room.senders { sender.resume() }
        if let (handler, count) = room.demand { handler(count) }
    }
}
