/// A hot, multicast source for events a delegate owns: the delegate sends, and any number of
/// consumers each take their own ``CallbackStream`` with their own buffering policy.
///
/// ```swift
/// final class LocationProxy: NSObject, CLLocationManagerDelegate {
///     let locations = Broadcast<CLLocation>(replay: 1)
///     func locationManager(_ m: CLLocationManager, didUpdateLocations l: [CLLocation]) {
///         for location in l { locations.send(location) }
///     }
/// }
/// for await location in proxy.locations.stream(buffering: .latest) { … }   // a map view
/// for await location in proxy.locations.stream(buffering: .unbounded) { … } // a track recorder
/// ```
///
/// - A consumer subscribes when it starts iterating (its first `next()`), and sees every element
///   sent after that, delivered per its own policy (one slow consumer never makes another lose
///   anything). With `replay: n` it first receives the last n elements sent before it subscribed.
/// - Unlike an `AsyncStream` shared by two loops, consumers never split elements.
/// - After ``finish()``, current consumers receive what they buffered and then end; a late
///   subscriber receives the replay (if any) and ends at once.
/// - A consumer that breaks out, is cancelled or drops its iterator unsubscribes (teardown).
/// - Consumers' streams do not keep the broadcast alive: when its owner (the delegate proxy)
///   releases it, it finishes, and so do its consumers.
///
/// - Important: ``send(_:)`` delivers under the broadcast's lock, so every consumer sees elements
///   in the same order even when subscriptions race with sends; `onDrop` handlers of consumers'
///   streams therefore run under that lock and must not call back into the same broadcast.
///   Sends from several threads at once are delivered one after another, in lock order.
public final class Broadcast<Element: Sendable>: Sendable {
    @usableFromInline let state: LockedState<BroadcastStateMachine<Element>>
    @usableFromInline let site: CallSite

    /// - Parameters:
    ///   - replay: How many of the most recent elements a new subscriber receives first.
    ///   - line: Call site reported with any misuse; leave the default.
    ///   - fileID: Call site reported with any misuse; leave the default.
    /// - Precondition: `replay >= 0`.
    public init(replay: Int = 0, fileID: String = #fileID, line: UInt = #line) {
        precondition(replay >= 0, "Broadcast(replay:): replay must be ≥ 0, got \(replay)")
        state = .create(BroadcastStateMachine(replay: replay))
        site = CallSite(fileID: fileID, line: line)
    }

    /// Releasing the broadcast finishes it: its consumers end after what they have buffered.
    deinit { finish() }

    /// Sends `element` to every current subscriber, each through its own policy. Returns once
    /// every subscriber's stream has enqueued, dropped or handed over the element (it never
    /// waits for a consumer, whatever its policy: a `.rendezvous` subscriber's element is
    /// enqueued). After ``finish()`` the element is discarded and the misuse reported once.
    public func send(_ element: Element) {
        let report: Bool = state.withLock { machine in
            switch machine.send(element) {
            case .fanOut(let sinks):
                for sink in sinks { sink.yield(element) }
                return false
            case .reportSendAfterFinish:
                return true
            case .none:
                return false
            }
        }
        if report {
            site.report(.yieldAfterFinish, "Broadcast.send(_:) was called after finish(); the element was discarded", bridge: self)
        }
    }

    /// Ends every subscriber's stream (after what it has buffered) and every later subscription.
    /// A second call does nothing. Waiters of ``waitForSubscribers(_:)`` resume.
    public func finish() {
        let (sinks, waiters) = state.withLock { machine in (machine.finish(), machine.takeAllWaiters()) }
        for sink in sinks ?? [] { sink.finish() }
        for waiter in waiters { waiter.resume() }
    }

    /// Whether ``finish()`` has been called.
    public var isFinished: Bool {
        state.withLock { machine in if case .finished = machine.phase { true } else { false } }
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
    ///   - buffering: This consumer's policy for elements it has not taken yet.
    ///   - onDrop: Called with each element this consumer's policy drops (under the broadcast's lock).
    ///   - line: Call site reported with any misuse; leave the default.
    ///   - fileID: Call site reported with any misuse; leave the default.
    public func stream(
        buffering: BufferingPolicy = .unbounded,
        onDrop: (@Sendable (Element) -> Void)? = nil,
        fileID: String = #fileID,
        line: UInt = #line
    ) -> CallbackStream<Element, Never> {
        // Weak: a consumer's stream does not keep the source alive; when its owner releases the
        // broadcast, it finishes (deinit) and its consumers end instead of waiting forever.
        CallbackStream(buffering: buffering, onDrop: onDrop, fileID: fileID, line: line) { [weak self] sink in
            guard let self else {
                sink.finish()
                return Cancellation()
            }
            let (action, waiters): (BroadcastStateMachine<Element>.SubscribeAction, [UnsafeContinuation<Void, Never>]) =
                state.withLock { machine in
                    let action = machine.subscribe(sink)
                    // Replay under the lock, so no send can come between the replay and the live elements.
                    switch action {
                    case .subscribed(_, let replay, let waiters):
                        for element in replay { sink.yield(element) }
                        return (action, waiters)
                    case .finished(let replay):
                        for element in replay { sink.yield(element) }
                        return (action, [])
                    }
                }
            for waiter in waiters { waiter.resume() }
            switch action {
            case .subscribed(let id, _, _):
                return Cancellation { [weak self] in
                    guard let self else { return }
                    let removed = self.state.withLock { $0.unsubscribe(id) }
                    withExtendedLifetime(removed) {}  // released outside the lock
                }
            case .finished:
                sink.finish()
                return Cancellation()
            }
        }
    }
}
