import Bridges
import BridgesTesting
import Testing

@testable import BridgesCombine

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine

/// DESIGN.md scenarios 1 and 3: a fast `PassthroughSubject` and a consumer that awaits between
/// elements. Every assertion holds whatever the scheduling.
@Suite(.timeLimit(.minutes(3))) struct SlowConsumerTests {
    /// Any bridge's iterator behind one non-generic type, so the consumer task captures no
    /// generic metatype. OpenCombine's `AsyncPublisher` is not Sendable: the iterator is made
    /// here and used only by the consumer task, so handing it over once is safe.
    final class IntIterator: @unchecked Sendable {
        private let nextElement: () async throws -> Int?
        init<S: AsyncSequence>(_ sequence: S) where S.Element == Int {
            var iterator = sequence.makeAsyncIterator()
            nextElement = { try await iterator.next() }
        }
        func next() async throws -> Int? { try await nextElement() }
    }

    static let count = 10_000

    // MARK: - A deterministic burst: what each bridge keeps

    /// Sends 0, waits until the consumer holds it and is busy (not in `next()`), sends 1..<10 000
    /// in one synchronous burst, lets the consumer go on, and finishes. What the consumer got.
    func burst<S: AsyncSequence>(
        _ bridge: (AnyPublisher<Int, Never>) -> S
    ) async -> [Int] where S.Element == Int {
        let subject = PassthroughSubject<Int, Never>()
        let requested = Gate()
        let holding = Gate()
        let release = Gate()
        let iterator = IntIterator(bridge(subject.afterRequest { requested.open() }.eraseToAnyPublisher()))
        let consumer = Task {
            var received: [Int] = []
            do {
                while let value = try await iterator.next() {
                    received.append(value)
                    if value == 0 {
                        holding.open()
                        await release.wait()
                    }
                }
            } catch {
                Issue.record("a Never-failing bridge threw \(error)")
            }
            return received
        }
        await requested.wait()
        subject.send(0)
        await holding.wait()
        for value in 1..<Self.count { subject.send(value) }
        release.open()
        subject.send(completion: .finished)
        return await consumer.value
    }

    @available(BridgesCombineValues, *)
    @Test func values_losesTheBurst() async {
        // Combine's (here OpenCombine's) own bridge: one request(1) per next().
        let received = await burst { $0.values }
        #expect(received == [0])
        #expect(received.count < Self.count)
    }

    @Test func unbounded_keepsEverythingInOrder() async {
        #expect(await burst { $0.stream(buffering: .unbounded) } == Array(0..<Self.count))
    }

    @Test func latest_keepsTheLast() async {
        #expect(await burst { $0.stream(buffering: .latest) } == [0, Self.count - 1])
    }

    @Test func dropNewest_keepsTheFirstN_dropOldest_theLastN() async {
        #expect(await burst { $0.stream(buffering: .dropNewest(100)) } == [0] + Array(1...100))
        #expect(await burst { $0.stream(buffering: .dropOldest(100)) } == [0] + Array(Self.count - 100..<Self.count))
    }

    @Test func waitingPolicies_onASubject_keepWhatWasRequested() async {
        // A subject cannot wait, so it drops what was not requested, exactly as the policy's
        // demand says: .rendezvous asked for nothing while the consumer was busy, .suspending(8)
        // for 8.
        #expect(await burst { $0.stream(buffering: .rendezvous) } == [0])
        #expect(await burst { $0.stream(buffering: .suspending(8)) } == [0] + Array(1...8))
    }

    // MARK: - Two consumers, concurrent, awaiting between elements

    @Test func twoConsumers_unbounded_bothGetEverythingInOrder() async {
        let subject = PassthroughSubject<Int, Never>()
        let subscribed = Counter()
        let upstream = subject.afterRequest { subscribed.increment() }
        let streams = [upstream.stream(buffering: .unbounded), upstream.stream(buffering: .unbounded)]
        let consumers = streams.map { stream in
            Task {
                var received: [Int] = []
                for await value in stream {
                    received.append(value)
                    await Task.yield()  // slower than the producer
                }
                return received
            }
        }
        await subscribed.wait(untilAtLeast: 2)
        for value in 0..<Self.count { subject.send(value) }
        subject.send(completion: .finished)
        for consumer in consumers { #expect(await consumer.value == Array(0..<Self.count)) }
    }

    @Test func twoConsumers_rendezvousWithABackpressureAwareSource_bothGetEverythingInOrder() async {
        let upstream = DemandRecordingPublisher<Int, Never>()
        let consumers = (0..<2).map { _ in
            Task {
                var received: [Int] = []
                for await value in upstream.stream(buffering: .rendezvous) {
                    received.append(value)
                    await Task.yield()
                }
                return received
            }
        }
        await upstream.wait { $0.subscriptionCount == 2 }
        for value in 0..<Self.count { await upstream.send(value) }  // waits for both to ask
        upstream.send(completion: .finished)
        for consumer in consumers { #expect(await consumer.value == Array(0..<Self.count)) }
        #expect(maxOutstanding(upstream.events) <= .max(2))  // one per consumer at most
    }

    @Test func latest_concurrent_deliversTheLastAndNothingOutOfOrder() async {
        let subject = PassthroughSubject<Int, Never>()
        let requested = Gate()
        let stream = subject.afterRequest { requested.open() }.stream(buffering: .latest)
        let consumer = Task {
            var received: [Int] = []
            for await value in stream {
                received.append(value)
                await Task.yield()
            }
            return received
        }
        await requested.wait()
        for value in 0..<Self.count { subject.send(value) }
        subject.send(completion: .finished)
        let received = await consumer.value
        #expect(received.last == Self.count - 1)
        #expect(zip(received, received.dropFirst()).allSatisfy { $0 < $1 })
    }
}

#endif
