import Bridges
import BridgesTesting
import Dispatch
import TestSupport
import Testing

@testable import BridgesCombine

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine

/// A publisher of `0..<count` that honours demand exactly and delivers on its own serial queue:
/// `request` comes from the consumer's thread (the stream's `onDemand`), `receive` from the queue,
/// so the stream subscriber's demand count is updated from two threads at once.
private final class QueueRangePublisher: Publisher, Sendable {
    typealias Output = Int
    typealias Failure = Never
    let count: Int
    private let subscribed = LockedState(0)
    /// Subscriptions that completed and whose queue has let go of the subscriber: a test awaits
    /// this before it checks that the subscriber was released (the consumer can see the end
    /// while the queue still holds it for a moment).
    let completed = Counter()
    init(count: Int) { self.count = count }

    /// How many times `receive(subscriber:)` was called.
    var subscriptionCount: Int { subscribed.withLock { $0 } }

    func receive<S: Subscriber>(subscriber: S) where S.Input == Int, S.Failure == Never {
        subscribed.withLock { $0 += 1 }
        let subscription = QueueRangeSubscription(
            count: count, subscriber: AnySubscriber(subscriber), completed: completed)
        subscriber.receive(subscription: subscription)
    }
}

private final class QueueRangeSubscription: Subscription, @unchecked Sendable {
    // @unchecked: the mutable state is in `state`, behind its lock; the subscriber is called on
    // `queue` only (one drain at a time, so serially, as Combine requires).
    private struct State {
        var subscriber: AnySubscriber<Int, Never>?
        var demand: Subscribers.Demand = .none
        var next = 0
        var draining = false
    }

    private let count: Int
    private let state: LockedState<State>
    private let queue = DispatchQueue(label: "QueueRangeSubscription")
    private let completed: Counter

    init(count: Int, subscriber: AnySubscriber<Int, Never>, completed: Counter) {
        self.count = count
        self.completed = completed
        self.state = LockedState(vouchingFor: State(subscriber: subscriber))
    }

    func request(_ demand: Subscribers.Demand) {
        let start = state.withLock { state -> Bool in
            guard state.subscriber != nil else { return false }
            state.demand += demand
            defer { state.draining = true }
            return !state.draining
        }
        if start {
            queue.async {
                // Counted once `drain` has returned: its local reference to the subscriber is gone.
                if self.drain() { self.completed.increment() }
            }
        }
    }

    func cancel() {
        let subscriber = state.withLock { state in
            defer { state.subscriber = nil }
            return state.subscriber
        }
        _ = subscriber  // released outside the lock
    }

    private enum Step {
        case send(AnySubscriber<Int, Never>, Int)
        case complete(AnySubscriber<Int, Never>)
        case stop
    }

    /// True when it delivered the completion.
    private func drain() -> Bool {
        while true {
            let step = state.withLock { state -> Step in
                guard let subscriber = state.subscriber else { return .stop }
                if state.next == count {
                    state.subscriber = nil
                    return .complete(subscriber)
                }
                guard state.demand > .none else {
                    state.draining = false
                    return .stop
                }
                state.demand -= 1
                defer { state.next += 1 }
                return .send(subscriber, state.next)
            }
            switch step {
            case .send(let subscriber, let value):
                let more = subscriber.receive(value)
                if more > .none { state.withLock { $0.demand += more } }
            case .complete(let subscriber):
                subscriber.receive(completion: .finished)
                return true
            case .stop:
                return false
            }
        }
    }
}

/// A subscription that is a value (as `Subscriptions.empty` is), forwarding to an object one.
private struct ValueSubscription: Subscription {
    let inner: any Subscription
    let combineIdentifier = CombineIdentifier()
    func request(_ demand: Subscribers.Demand) { inner.request(demand) }
    func cancel() { inner.cancel() }
}

/// Hands its subscriber a ``ValueSubscription`` around `upstream`'s subscription.
private struct ValueSubscriptionPublisher<Upstream: Publisher>: Publisher {
    typealias Output = Upstream.Output
    typealias Failure = Upstream.Failure
    let upstream: Upstream

    func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        upstream.receive(subscriber: Forwarder(downstream: subscriber))
    }

    private struct Forwarder<Downstream: Subscriber>: Subscriber
    where Downstream.Input == Output, Downstream.Failure == Failure {
        let downstream: Downstream
        let combineIdentifier = CombineIdentifier()
        func receive(subscription: any Subscription) {
            downstream.receive(subscription: ValueSubscription(inner: subscription))
        }
        func receive(_ input: Output) -> Subscribers.Demand { downstream.receive(input) }
        func receive(completion: Subscribers.Completion<Failure>) { downstream.receive(completion: completion) }
    }
}

/// The stream subscriber's compact layout: its state under a shared striped lock rather than a
/// lock of its own, the subscription held as a class existential (a value one boxed), and one
/// per-stream source shared by every iteration.
@Suite(.timeLimit(.minutes(3))) struct StreamSubscriberLayoutTests {
    /// More live subscriptions than the striped lock table has locks, each fed from its own queue
    /// while its consumer requests from another thread: subscribers that share a lock must
    /// neither corrupt each other's demand count (an excess emission would be reported, or a
    /// lost request would hang the stream) nor deadlock; every element arrives, in order.
    @Test(.timeLimit(.minutes(2)), arguments: [BufferingPolicy.rendezvous, .suspending(3)])
    func manySubscribersSharingLocks_onRealThreads_countDemandExactly(_ policy: BufferingPolicy) async {
        let streams = 4 * Lock.stripeCount
        let count = stressRounds(300)
        let log = DiagnosticLog()
        let boxes = (0..<streams).map { _ in WeakSubscriberBox() }
        weak var releasedPublisher: QueueRangePublisher?
        do {
            let publisher = QueueRangePublisher(count: count)
            releasedPublisher = publisher
            let made = Diagnostics.withHandler(log.handler) {
                boxes.map { SubscriberCapturingPublisher(upstream: publisher, box: $0).stream(buffering: policy) }
            }
            let results = await withTaskGroup(of: [Int].self) { group in
                for stream in made {
                    group.addTask {
                        var received: [Int] = []
                        received.reserveCapacity(count)
                        for await value in stream { received.append(value) }
                        return received
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.count == streams)
            #expect(results.allSatisfy { $0 == Array(0..<count) })
            await publisher.completed.wait(untilAtLeast: streams)  // every queue let go of its subscriber
        }
        #expect(log.kinds.isEmpty, "\(log.all)")
        #expect(releasedPublisher == nil)
        #expect(boxes.allSatisfy { $0.object == nil })
    }

    @Test func subscriptionReference_isTheObjectItself_andAValueIsBoxed() {
        weak var releasedPublisher: DemandRecordingPublisher<Int, Never>?
        weak var releasedSubscriber: RecordingSubscriber<Int, Never>?
        do {
            let recorder = DemandRecordingPublisher<Int, Never>()
            let subscriber = RecordingSubscriber<Int, Never>()
            releasedPublisher = recorder
            releasedSubscriber = subscriber
            recorder.subscribe(subscriber)
            let object = subscriber.state.withLock { $0.subscription }!
            #expect(StreamSubscriberUpstream.reference(to: object) === (object as AnyObject))
            #expect(StreamSubscriberUpstream.reference(to: ValueSubscription(inner: object)) is SubscriptionBox)
            #expect(StreamSubscriberUpstream.reference(to: Subscriptions.empty) is SubscriptionBox)
            subscriber.cancel()
            #expect(recorder.cancellationCount == 1)
        }
        #expect(releasedPublisher == nil)
        #expect(releasedSubscriber == nil)
    }

    /// Through the box, requests reach upstream exactly as asked and cancellation once.
    @Test
    func valueSubscription_forwardsDemandAndCancellation() async {
        weak var releasedUpstream: DemandRecordingPublisher<Int, Never>?
        let box = WeakSubscriberBox()
        do {
            let upstream = DemandRecordingPublisher<Int, Never>()
            releasedUpstream = upstream
            let stream = SubscriberCapturingPublisher(
                upstream: ValueSubscriptionPublisher(upstream: upstream), box: box
            )
            .stream(buffering: .suspending(2))
            let consumer = Task {
                var received: [Int] = []
                for await value in stream {
                    received.append(value)
                    if received.count == 3 { break }
                }
                return received
            }
            for value in 0..<3 { await upstream.send(value) }
            #expect(await consumer.value == [0, 1, 2])
            await upstream.waitForCancellation()
            #expect(upstream.requests.first == .max(2))
            #expect(upstream.requests.allSatisfy { $0 > .none })
            #expect(upstream.cancellationCount == 1)
            #expect(upstream.events.filter { $0 == .cancelledAgain }.isEmpty)
            #expect(box.object == nil)
        }
        #expect(releasedUpstream == nil)
    }

    /// `Empty` hands over `Subscriptions.empty`, a value: boxed, then finished at once.
    @Test(arguments: [BufferingPolicy.unbounded, .rendezvous, .suspending(2), .latest])
    func emptyPublisher_finishesUnderEveryPolicy(_ policy: BufferingPolicy) async {
        var count = 0
        for await _ in Empty<Int, Never>().stream(buffering: policy) { count += 1 }
        #expect(count == 0)
    }

    /// Cold per iterator with one shared source: each iteration subscribes once, to the same
    /// publisher, and gets its own subscriber; the publisher is released with the stream.
    @Test
    func oneStream_iteratedThreeTimes_subscribesThreeTimes_andReleasesThePublisher() async {
        weak var releasedPublisher: QueueRangePublisher?
        let box = WeakSubscriberBox()
        do {
            let publisher = QueueRangePublisher(count: 5)
            releasedPublisher = publisher
            let stream = SubscriberCapturingPublisher(upstream: publisher, box: box).stream(buffering: .rendezvous)
            for iteration in 1...3 {
                var received: [Int] = []
                for await value in stream { received.append(value) }
                #expect(received == [0, 1, 2, 3, 4])
                #expect(publisher.subscriptionCount == iteration)
                await publisher.completed.wait(untilAtLeast: iteration)  // its queue let go of the subscriber
                #expect(box.object == nil)  // this iteration's subscriber, released at its end
            }
        }
        #expect(releasedPublisher == nil)
    }
}

#endif
