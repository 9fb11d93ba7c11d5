// Case 4: `publisher.stream(buffering:)` vs OpenCombine's `.values`, from a range publisher
// (demand-honouring: nothing may be lost by either) and from a PassthroughSubject sent into
// from a thread as fast as it goes (a subject drops what nobody demanded, so `.values` — one
// element of demand per `next()` — loses most; `.unbounded` must lose nothing).

import Bridges
import BridgesCombine
import Foundation

#if canImport(Combine)
import Combine  // Apple platforms: BridgesCombine is built on Apple's Combine, so the cases use its publishers
#else
import OpenCombine
#endif

enum CombineSource: String, Sendable { case range, subject }

/// Sends `0..<n` from a new thread once the first demand has reached the subject, then finishes.
func subjectPublisher(n: Int) -> StartOnFirstDemand<PassthroughSubject<Int, Never>> {
    let subject = PassthroughSubject<Int, Never>()
    nonisolated(unsafe) let unsafeSubject = subject  // sent to only from the one producer thread
    return StartOnFirstDemand(subject) {
        onThread {
            for i in 0..<n { unsafeSubject.send(i) }
            unsafeSubject.send(completion: .finished)
        }
    }
}

/// Passes `upstream` through and calls `start` once, right after the first `request(_:)` has
/// been forwarded upstream, so a hot source starts only when someone really listens
/// (`handleEvents(receiveRequest:)` runs its closure before forwarding, which races).
struct StartOnFirstDemand<Upstream: Publisher>: Publisher {
    typealias Output = Upstream.Output
    typealias Failure = Upstream.Failure
    let upstream: Upstream
    let start: @Sendable () -> Void
    init(_ upstream: Upstream, start: @escaping @Sendable () -> Void) {
        self.upstream = upstream
        self.start = start
    }

    func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        upstream.subscribe(Inner(downstream: subscriber, start: start))
    }

    final class Inner<S: Subscriber>: Subscriber, Subscription where S.Input == Output, S.Failure == Failure {
        let downstream: S
        let start: @Sendable () -> Void
        let lock = NSLock()
        var upstream: (any Subscription)?
        var started = false
        init(downstream: S, start: @escaping @Sendable () -> Void) {
            self.downstream = downstream
            self.start = start
        }

        func receive(subscription: any Subscription) {
            lock.lock()
            upstream = subscription
            lock.unlock()
            downstream.receive(subscription: self)
        }
        func receive(_ input: Output) -> Subscribers.Demand { downstream.receive(input) }
        func receive(completion: Subscribers.Completion<Failure>) { downstream.receive(completion: completion) }
        func request(_ demand: Subscribers.Demand) {
            lock.lock()
            let up = upstream
            let first = !started
            started = true
            lock.unlock()
            up?.request(demand)
            if first { start() }
        }
        func cancel() {
            lock.lock()
            let up = upstream
            upstream = nil
            lock.unlock()
            up?.cancel()
        }
    }
}

func bridgesPublisherStream(
    _ policy: StreamPolicy, _ source: CombineSource, n: Int, name: String
) async throws -> Sample {
    try await detachedRun {
        let (tally, ns) = await timed { () async -> Tally in
            var tally = Tally()
            switch source {
            case .range:
                for await x in (0..<n).publisher.stream(buffering: policy) { tally.add(x) }
            case .subject:
                for await x in subjectPublisher(n: n).stream(buffering: policy) { tally.add(x) }
            }
            return tally
        }
        try tally.check("\(name) bridges", sent: n, lossless: source == .range || policy == .unbounded)
        return tally.sample(ns: ns, sent: n)
    }
}

func openCombineValues(_ source: CombineSource, n: Int, name: String) async throws -> Sample {
    try await detachedRun {
        let (tally, ns) = await timed { () async -> Tally in
            var tally = Tally()
            switch source {
            case .range:
                for await x in (0..<n).publisher.values { tally.add(x) }
            case .subject:
                for await x in subjectPublisher(n: n).values { tally.add(x) }
            }
            return tally
        }
        try tally.check("\(name) OpenCombine .values", sent: n, lossless: source == .range)
        return tally.sample(ns: ns, sent: n)
    }
}

@MainActor
func runCombine(_ config: Config) async {
    let n = config.n(100_000, quick: 20_000)
    for source in [CombineSource.range, .subject] {
        for (label, policy) in [("rendezvous", StreamPolicy.rendezvous), ("unbounded", .unbounded)] {
            let name = "publisher.\(source).\(label)"
            await compare(
                name, peer: ".values", lossy: source == .subject,
                noClaim: source == .range && policy == .unbounded ? "unlimited demand vs .values' one at a time" : nil,
                config: config,
                bridges: { try await bridgesPublisherStream(policy, source, n: n, name: name) },
                peer: { try await openCombineValues(source, n: n, name: name) }
            )
        }
    }
}
