import Bridges

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine

/// Calls `onRequest` after a downstream request has been forwarded to the upstream
/// subscription, so a test that waits for it knows the upstream (a subject) really has demand.
/// `handleEvents(receiveRequest:)` runs its closure *before* forwarding, which let tests send
/// into a subject that had no demand yet: the value was dropped and the test hung.
struct AfterRequest<Upstream: Publisher>: Publisher {
    typealias Output = Upstream.Output
    typealias Failure = Upstream.Failure

    let upstream: Upstream
    let onRequest: @Sendable () -> Void

    func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        upstream.receive(subscriber: Inner(downstream: subscriber, onRequest: onRequest))
    }

    // @unchecked Sendable: Combine's rules serialise the calls it makes to `downstream`, and
    // `upstreamSubscription` is only touched under its lock.
    final class Inner<Downstream: Subscriber>: Subscriber, Subscription, @unchecked Sendable
    where Downstream.Input == Output, Downstream.Failure == Failure {
        let downstream: Downstream
        let onRequest: @Sendable () -> Void
        let upstreamSubscription = LockedState<(any Subscription)?>(nil)

        init(downstream: Downstream, onRequest: @escaping @Sendable () -> Void) {
            self.downstream = downstream
            self.onRequest = onRequest
        }

        func receive(subscription: any Subscription) {
            upstreamSubscription.withLock { $0 = subscription }
            downstream.receive(subscription: self)
        }

        func receive(_ input: Output) -> Subscribers.Demand { downstream.receive(input) }
        func receive(completion: Subscribers.Completion<Failure>) { downstream.receive(completion: completion) }

        func request(_ demand: Subscribers.Demand) {
            upstreamSubscription.withLock { $0 }?.request(demand)
            onRequest()
        }

        func cancel() { upstreamSubscription.withLock { $0 }?.cancel() }
    }
}

extension Publisher {
    func afterRequest(_ onRequest: @escaping @Sendable () -> Void) -> AfterRequest<Self> {
        AfterRequest(upstream: self, onRequest: onRequest)
    }
}
#endif
