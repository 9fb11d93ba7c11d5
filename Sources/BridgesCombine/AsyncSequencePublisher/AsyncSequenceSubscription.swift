#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine
import Bridges

/// One subscription to an ``AsyncSequencePublisher``: a lock around
/// ``AsyncSequenceSubscriptionStateMachine`` and the task that iterates the sequence.
///
/// The subscriber is called only from the iterating task, one call at a time, never with the
/// lock held; `request(_:)` and `cancel()` may come from any thread, including from inside
/// `receive(_:)`.
final class AsyncSequenceSubscription<Base: AsyncSequence & Sendable, Failure: Error>:
    Subscription, @unchecked Sendable  // all mutable state is in `state`, behind its lock; the
    // subscriber inside it is only called from the iterating task, serially, as Combine requires
{
    /// Erased so that the iterating task captures no subscriber metatype (which need not be Sendable).
    typealias Downstream = AnySubscriber<Base.Element, Failure>

    private let state: Locked<AsyncSequenceSubscriptionStateMachine<Downstream>>
    private let base: Base
    private let failure: @Sendable (any Error) -> Failure
    private let reporter: Reporter
    private let endsAfterOneElement: Bool

    init<S: Subscriber>(base: Base, subscriber: S, failure: @escaping @Sendable (any Error) -> Failure, endsAfterOneElement: Bool, reporter: Reporter)
        where S.Input == Base.Element, S.Failure == Failure
    {
        self.base = base
        self.failure = failure
        self.reporter = reporter
        self.endsAfterOneElement = endsAfterOneElement
        self.state = Locked(AsyncSequenceSubscriptionStateMachine(subscriber: AnySubscriber(subscriber)))
    }

    /// Called by the publisher once `subscriber.receive(subscription:)` has returned.
    func didSubscribe() {
        if case .startTask = state.withLock({ $0.didSubscribe() }) { startTask() }
    }

    func request(_ demand: Subscribers.Demand) {
        switch state.withLock({ $0.request(demand) }) {
        case .none:
            break
        case .reportInvalidDemand:
            reporter.report(.invalidDemand, "request(\(demand)) on a subscription to an AsyncSequence publisher; demand must be at least 1, the request was ignored", bridge: self)
        case .startTask:
            startTask()
        case .resume(let waiter):
            waiter.resume(returning: true)
        }
    }

    func cancel() {
        guard case .cancel(let task, let waiter, let subscriber) = state.withLock({ $0.cancel() }) else { return }
        task?.cancel()
        waiter?.resume(returning: false)
        _ = subscriber  // released here, outside the lock
    }

    private func startTask() {
        let task = Task { await self.iterate() }
        if case .cancel(let task) = state.withLock({ $0.taskStarted(task) }) { task.cancel() }
    }

    /// The body of the iterating task: one unit of demand, then one `next()`, then one emission.
    private func iterate() async {
        var iterator = base.makeAsyncIterator()
        while await awaitDemand() {
            let element: Base.Element?
            do {
                element = try await iterator.next()
            } catch {
                state.withLock { $0.finish() }?.receive(completion: .failure(failure(error)))
                return
            }
            guard let element else {
                state.withLock { $0.finish() }?.receive(completion: .finished)
                return
            }
            guard let subscriber = state.withLock({ $0.subscriberForEmission() }) else { return }
            let additional = subscriber.receive(element)
            if endsAfterOneElement {
                state.withLock { $0.finish() }?.receive(completion: .finished)
                return
            }
            state.withLock { $0.received(additional: additional) }
        }
    }

    /// Takes one unit of demand, suspending while there is none. False once the subscription ended.
    private func awaitDemand() async -> Bool {
        switch state.withLock({ $0.takeDemand() }) {
        case .proceed: return true
        case .stop: return false
        case .wait: break
        }
        return await withUnsafeContinuation { waiter in
            if case .resume(let waiter, let proceed) = state.withLock({ $0.awaitDemand(waiter) }) {
                waiter.resume(returning: proceed)
            }
        }
    }

    var description: String { "AsyncSequenceSubscription(\(Base.self))" }
}

#endif
