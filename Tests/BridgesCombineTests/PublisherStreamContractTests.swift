import Bridges
import Testing

@testable import BridgesCombine

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine

/// A broken publisher: sends values (and completes) without ever calling `receive(subscription:)`.
private struct SendsBeforeSubscribing: Publisher {
    typealias Output = Int
    typealias Failure = Never
    func receive<S: Subscriber>(subscriber: S) where S.Input == Int, S.Failure == Never {
        _ = subscriber.receive(1)
        _ = subscriber.receive(2)
    }
}

@Suite(.timeLimit(.minutes(3))) struct PublisherStreamContractTests {
    /// Chosen behaviour: the first value is delivered, the stream finishes (it never waits
    /// forever for a subscription), and the misuse is reported once, by name.
    @Test(arguments: [BufferingPolicy.unbounded, .rendezvous, .suspending(2), .latest])
    func valueBeforeSubscription_isReported_andTheStreamFinishes(_ policy: BufferingPolicy) async {
        let log = DiagnosticLog()
        let stream = Diagnostics.withHandler(log.handler) { SendsBeforeSubscribing().stream(buffering: policy) }
        var received: [Int] = []
        for await value in stream { received.append(value) }
        #expect(received == [1], "\(policy)")
        #expect(log.kinds == [.valueBeforeSubscription], "\(policy)")
    }
}

#endif
