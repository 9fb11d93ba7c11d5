import Foundation

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

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

    // Combine's rules serialise the calls it makes; `upstreamSubscription` is written once,
    // before the downstream can call `request` or `cancel`, and read under `lock` after that.
    final class Inner<Downstream: Subscriber>: Subscriber, Subscription, @unchecked Sendable
    where Downstream.Input == Output, Downstream.Failure == Failure {
        let downstream: Downstream
        let onRequest: @Sendable () -> Void
        let lock = NSLock()
        var upstreamSubscription: (any Subscription)?

        init(downstream: Downstream, onRequest: @escaping @Sendable () -> Void) {
            self.downstream = downstream
            self.onRequest = onRequest
        }

        func receive(subscription: any Subscription) {
            lock.withLock { upstreamSubscription = subscription }
            downstream.receive(subscription: self)
        }

        func receive(_ input: Output) -> Subscribers.Demand { downstream.receive(input) }
        func receive(completion: Subscribers.Completion<Failure>) { downstream.receive(completion: completion) }

        func request(_ demand: Subscribers.Demand) {
            lock.withLock { upstreamSubscription }?.request(demand)
            onRequest()
        }

        func cancel() { lock.withLock { upstreamSubscription }?.cancel() }
    }
}

extension Publisher {
    func afterRequest(_ onRequest: @escaping @Sendable () -> Void) -> AfterRequest<Self> {
        AfterRequest(upstream: self, onRequest: onRequest)
    }
}
