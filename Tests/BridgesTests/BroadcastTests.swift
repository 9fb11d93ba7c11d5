import Bridges
import Dispatch
import TestSupport
import Testing

@Suite("Broadcast", .timeLimit(.minutes(3)))
struct BroadcastTests {
    @Test func threeConsumersWithDifferentPolicies_eachGetWhatTheirPolicyPromises() async {
        let events = Broadcast<Int>()
        let slowGate = Signal()
        let latestDropped = Collected<Int>()
        let unbounded = Task {
            await events.stream(buffering: .unbounded).reduce(into: [Int]()) { $0.append($1) }
        }
        let rendezvous = Task {
            await events.stream(buffering: .rendezvous).reduce(into: [Int]()) { $0.append($1) }
        }
        // The slow consumer takes nothing until everything was sent: it conflates to the last.
        let latest = Task {
            var received: [Int] = []
            var first = true
            for await value in events.stream(buffering: .latest, onDrop: { latestDropped.append($0) }) {
                if first {
                    await slowGate.wait()
                    first = false
                }
                received.append(value)
            }
            return received
        }
        await events.waitForSubscribers(3)
        #expect(events.subscriberCount == 3)
        events.yield(0)  // the latest consumer takes 0 (or it is still buffered), then stalls on the gate
        for value in 1...100 { events.yield(value) }
        events.finish()
        slowGate.open()
        #expect(await unbounded.value == Array(0...100))
        #expect(await rendezvous.value == Array(0...100), "a .rendezvous subscriber never loses")
        let conflated = await latest.value
        #expect(conflated.last == 100)
        #expect(conflated.count <= 2)
        #expect(conflated.count + latestDropped.count == 101, "what latest did not deliver was reported dropped")
        #expect(events.subscriberCount == 0)
    }

    @Test func consumerSeesOnlyElementsSentAfterItSubscribed() async {
        let events = Broadcast<Int>()
        events.yield(-1)  // nobody listens: gone
        let consumer = Task { await events.stream().reduce(into: [Int]()) { $0.append($1) } }
        await events.waitForSubscribers(1)
        events.yield(1)
        events.yield(2)
        events.finish()
        #expect(await consumer.value == [1, 2])
    }

    @Test func replay_givesLastNToANewSubscriber_thenLiveElements() async {
        let events = Broadcast<Int>(replay: 2)
        for value in 1...5 { events.yield(value) }
        let consumer = Task { await events.stream().reduce(into: [Int]()) { $0.append($1) } }
        await events.waitForSubscribers(1)
        events.yield(6)
        events.finish()
        #expect(await consumer.value == [4, 5, 6])
    }

    @Test func lateSubscriberToFinishedSource_finishesAtOnce() async {
        let events = Broadcast<Int>()
        events.yield(1)
        events.finish()
        var count = 0
        for await _ in events.stream() { count += 1 }
        #expect(count == 0)
        let replaying = Broadcast<Int>(replay: 1)
        replaying.yield(7)
        replaying.finish()
        #expect(await replaying.stream().reduce(into: [Int]()) { $0.append($1) } == [7])
    }

    @Test func consumerBreakingOut_unsubscribes() async {
        let events = Broadcast<Int>()
        let consumer = Task {
            for await value in events.stream() where value == 2 { return value }
            return -1
        }
        await events.waitForSubscribers(1)
        for value in 1...3 { events.yield(value) }
        #expect(await consumer.value == 2)
        #expect(events.subscriberCount == 0)
        events.finish()
    }

    @Test func sendAfterFinish_isReportedOnce_atTheSend() async {
        let (line, diagnostics) = await capturingDiagnostics { () -> UInt in
            let events = Broadcast<Int>()
            events.finish()
            let line: UInt = #line + 1  // the next line's
            events.yield(1)
            events.yield(2)
            events.finish()
            return line
        }
        #expect(diagnostics.map(\.kind) == [.yieldAfterFinish])
        #expect(diagnostics.first?.fileID == #fileID)
        #expect(diagnostics.first?.line == line)
        #expect(diagnostics.first?.occurrences == 2)
    }

    @Test func releasingTheBroadcast_endsItsConsumers() async {
        weak var weakEvents: Broadcast<Int>?
        var events: Broadcast<Int>? = Broadcast<Int>()
        weakEvents = events
        let stream = events!.stream()
        let consumer = Task { await stream.reduce(into: [Int]()) { $0.append($1) } }
        await events!.waitForSubscribers(1)
        events!.yield(1)
        events = nil
        // The consumer ends only if the broadcast was released. Its subscription may still
        // hold the broadcast for a moment after it resumed the waiter above, so the release is
        // checked once the consumer has ended, not at `events = nil`.
        #expect(await consumer.value == [1])
        #expect(weakEvents == nil)
    }

    @Test func waitForSubscribers_whenCancelled_returns() async {
        let events = Broadcast<Int>()
        let waiter = Task { await events.waitForSubscribers(5) }
        waiter.cancel()
        await waiter.value
        events.finish()
    }

    @Test func concurrentSendsAndSubscriptions_sameOrderForEveryone() async {
        for _ in 0..<stressRounds(50) {
            let events = Broadcast<Int>(replay: 4)
            let ready = Signal()
            let producer = Task.detached {
                await ready.wait()
                for value in 0..<2_000 { events.yield(value) }
                events.finish()
            }
            let consumers = (0..<3).map { _ in
                Task { await events.stream().reduce(into: [Int]()) { $0.append($1) } }
            }
            ready.open()
            for consumer in consumers {
                let received = await consumer.value
                // Each consumer sees a contiguous run ending at the last element (replay + live).
                if let first = received.first {
                    #expect(received == Array(first..<2_000))
                }
            }
            await producer.value
        }
    }
}
