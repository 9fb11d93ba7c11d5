#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine
import Bridges

/// A publisher for tests that records every demand request and cancellation its subscribers
/// make, so a test can assert backpressure: "the bridge asked for one element per `next()`",
/// "it never had more than 8 outstanding", "cancelling the consumer cancelled exactly once".
///
/// <!-- snippet: test -->
/// ```swift
/// let upstream = DemandRecordingPublisher<Int, Never>()
/// var iterator = upstream.stream(buffering: .rendezvous).makeAsyncIterator()
/// async let first = iterator.next()
/// await upstream.send(1)                       // waits for demand, then delivers
/// #expect(upstream.requests == [.max(1)])
/// ```
///
/// Two ways to send:
/// - ``send(_:)`` (async) is a *backpressure-aware source*: it waits until there is at least one
///   subscriber and every subscriber has demand, then delivers once to each. It never exceeds demand.
/// - ``sendIgnoringDemand(_:)`` delivers at once to every subscriber, demand or not: a misbehaving
///   publisher, to test how a subscriber copes. Each element sent beyond demand is counted in
///   ``excessEmissions``.
///
/// Send from one task at a time (Combine requires calls to a subscriber to be serialised).
/// `request(.none)` is recorded and reported as `BridgeDiagnostic.Kind.invalidDemand`.
/// Subscribers are released when they cancel or when the publisher completes them.
public final class DemandRecordingPublisher<Output, Failure: Error>: Publisher, @unchecked Sendable {
    // @unchecked: all mutable state is in `state` behind its lock; subscribers are called outside it.

    /// One thing a subscriber did or was sent, in the order it happened.
    public enum Event: Hashable, @unchecked Sendable, CustomStringConvertible {
        // @unchecked: every payload is a `Subscribers.Demand`, a struct holding one integer (a
        // value, safe to share). OpenCombine declares it `Sendable`; whether each Combine SDK
        // does is not relied on, so this holds either way.
        /// A subscriber attached (it was handed its subscription).
        case subscribed
        /// A subscriber called `request(_:)` (including invalid `.none` requests).
        case requested(Subscribers.Demand)
        /// A subscriber called `cancel()` while its subscription was active.
        case cancelled
        /// A subscriber called `cancel()` again, or after completion (harmless in Combine; recorded
        /// so a test can assert "cancelled exactly once").
        case cancelledAgain
        /// The publisher delivered one element to one subscriber.
        case sent
        /// The publisher completed one subscriber.
        case completed

        public var description: String {
            switch self {
            case .subscribed: "subscribed"
            case .requested(let demand): "requested(\(demand))"
            case .cancelled: "cancelled"
            case .cancelledAgain: "cancelledAgain"
            case .sent: "sent"
            case .completed: "completed"
            }
        }
    }

    fileprivate struct Active {
        var subscriber: AnySubscriber<Output, Failure>
        var demand: Subscribers.Demand
    }

    fileprivate struct Waiter {
        let condition: @Sendable (DemandRecordingPublisher) -> Bool
        let continuation: UnsafeContinuation<Bool, Never>
    }

    fileprivate struct State {
        var events: [Event] = []
        var active: [Int: Active] = [:]
        var nextID = 0
        var excessEmissions = 0
        var waiters: [Int: Waiter] = [:]
        var nextWaiterID = 0
        var cancelledWaiters: Set<Int> = []
    }

    private let state = LockedState(State())
    private let site: CallSite

    public init(fileID: String = #fileID, line: UInt = #line) {
        site = CallSite(fileID: fileID, line: line)
    }

    // MARK: - What was recorded

    /// Everything that happened, in order, over all subscriptions.
    public var events: [Event] { state.withLock { $0.events } }

    /// Every `request(_:)` made, in order, over all subscriptions.
    public var requests: [Subscribers.Demand] {
        events.compactMap { if case .requested(let demand) = $0 { demand } else { nil } }
    }

    /// How many subscriptions were cancelled (first `cancel()` of each).
    public var cancellationCount: Int { events.filter { $0 == .cancelled }.count }

    /// How many subscribers ever attached.
    public var subscriptionCount: Int { events.filter { $0 == .subscribed }.count }

    /// How many subscriptions are active (neither cancelled nor completed).
    public var activeSubscriptionCount: Int { state.withLock { $0.active.count } }

    /// The demand requested and not yet delivered, summed over active subscriptions.
    public var outstandingDemand: Subscribers.Demand {
        state.withLock { $0.active.values.reduce(Subscribers.Demand.none) { $0 + $1.demand } }
    }

    /// Elements ``sendIgnoringDemand(_:)`` delivered to a subscriber that had no demand.
    public var excessEmissions: Int { state.withLock { $0.excessEmissions } }

    // MARK: - Waiting (gates for tests, no sleeping)

    /// Suspends until `condition` holds for this publisher (checked now and after every event).
    /// Returns false if the waiting task was cancelled first.
    @discardableResult
    public func wait(until condition: @escaping @Sendable (DemandRecordingPublisher) -> Bool) async -> Bool {
        if condition(self) { return true }
        let id = state.withLock { state -> Int in
            defer { state.nextWaiterID += 1 }
            return state.nextWaiterID
        }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                let cancelled = state.withLock { state -> Bool in
                    if state.cancelledWaiters.remove(id) != nil { return true }
                    state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    return false
                }
                if cancelled { continuation.resume(returning: false) } else { wakeWaiters() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let waiter = state.waiters.removeValue(forKey: id) else {
                    state.cancelledWaiters.insert(id)
                    return nil
                }
                return waiter
            }
            waiter?.continuation.resume(returning: false)
        }
    }

    /// Suspends until at least `count` subscriptions were cancelled.
    public func waitForCancellation(count: Int = 1) async {
        await wait { $0.cancellationCount >= count }
    }

    /// Suspends until some active subscription has demand.
    public func waitForDemand() async {
        await wait { $0.outstandingDemand > .none }
    }

    /// Resumes every waiter whose condition now holds. Conditions read the publisher, which takes
    /// the lock, so they are evaluated outside it.
    private func wakeWaiters() {
        let waiters = state.withLock { $0.waiters }
        for (id, waiter) in waiters where waiter.condition(self) {
            if state.withLock({ $0.waiters.removeValue(forKey: id) }) != nil {
                waiter.continuation.resume(returning: true)
            }
        }
    }

    // MARK: - Publisher

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        let id = state.withLock { state -> Int in
            defer { state.nextID += 1 }
            state.active[state.nextID] = Active(subscriber: AnySubscriber(subscriber), demand: .none)
            state.events.append(.subscribed)
            return state.nextID
        }
        subscriber.receive(subscription: RecordingSubscription(publisher: self, id: id))
        wakeWaiters()
    }

    fileprivate func request(_ demand: Subscribers.Demand, id: Int) {
        state.withLock { state in
            state.events.append(.requested(demand))
            if demand > .none { state.active[id]?.demand += demand }
        }
        if demand == .none {
            site.report(
                .invalidDemand,
                "request(.none) on a DemandRecordingPublisher subscription; the request was ignored. Request .max(n) "
                    + "with n ≥ 1 or .unlimited.",
                bridge: self
            )
        }
        wakeWaiters()
    }

    fileprivate func cancel(id: Int) {
        let released = state.withLock { state -> Active? in
            let released = state.active.removeValue(forKey: id)
            state.events.append(released == nil ? .cancelledAgain : .cancelled)
            return released
        }
        _ = released  // the subscriber is released here, outside the lock
        wakeWaiters()
    }

    // MARK: - Sending

    /// Waits until at least one subscriber is attached and every attached subscriber has demand,
    /// then delivers `value` once to each. Returns false (sending nothing) if the waiting task was
    /// cancelled.
    @discardableResult
    public func send(_ value: Output) async -> Bool {
        let ready = await wait { publisher in
            publisher.state.withLock { state in
                !state.active.isEmpty && state.active.values.allSatisfy { $0.demand > .none }
            }
        }
        guard ready else { return false }
        forward(value, ignoringDemand: false)
        return true
    }

    /// Delivers `value` to every attached subscriber now, whether it asked for it or not.
    public func sendIgnoringDemand(_ value: Output) {
        forward(value, ignoringDemand: true)
    }

    private func forward(_ value: Output, ignoringDemand: Bool) {
        let targets = state.withLock { state -> [(Int, AnySubscriber<Output, Failure>)] in
            var targets: [(Int, AnySubscriber<Output, Failure>)] = []
            for id in state.active.keys.sorted() {
                guard var active = state.active[id] else { continue }
                if active.demand > .none {
                    active.demand -= 1
                } else if ignoringDemand {
                    state.excessEmissions += 1
                } else {
                    continue
                }
                state.active[id] = active
                state.events.append(.sent)
                targets.append((id, active.subscriber))
            }
            return targets
        }
        for (id, subscriber) in targets {
            let additional = subscriber.receive(value)
            if additional > .none {
                state.withLock { $0.active[id]?.demand += additional }
            }
        }
        wakeWaiters()
    }

    /// Completes every attached subscriber and lets go of it.
    public func send(completion: Subscribers.Completion<Failure>) {
        let targets = state.withLock { state -> [AnySubscriber<Output, Failure>] in
            let targets = state.active.keys.sorted().compactMap { state.active[$0]?.subscriber }
            state.active = [:]
            state.events.append(contentsOf: repeatElement(.completed, count: targets.count))
            return targets
        }
        for subscriber in targets { subscriber.receive(completion: completion) }
        wakeWaiters()
    }
}

/// The subscription a ``DemandRecordingPublisher`` hands out: forwards to the publisher, which records.
private final class RecordingSubscription<Output, Failure: Error>: Subscription, Sendable {
    private let publisher: DemandRecordingPublisher<Output, Failure>
    private let id: Int

    init(publisher: DemandRecordingPublisher<Output, Failure>, id: Int) {
        self.publisher = publisher
        self.id = id
    }

    func request(_ demand: Subscribers.Demand) { publisher.request(demand, id: id) }
    func cancel() { publisher.cancel(id: id) }
}

#endif
