import Bridges
import Dispatch
import Foundation
import TestSupport
import Testing

/// No caller of a broadcast does other parties' delivery work: a new subscriber receives its
/// replay and then live elements while a thread sends in a tight loop, and every element sent to
/// it is accounted for.
@Suite("Broadcast: bounded work", .serialized, .timeLimit(.minutes(3)))
struct BroadcastBoundedWorkTests {
    static let policies: [BufferingPolicy] = [.latest, .unbounded, .suspending(2)]

    @Test(arguments: [0, 1, 2], policies)
    func subscribeTakeThreeBreak_whileAThreadSendsInATightLoop_neverHangs_andAccountsForEveryElement(
        replay: Int,
        policy: BufferingPolicy
    ) async {
        let rounds = 300
        let ledgers = Collected<SubscriberLedger>()
        let released = Counter()
        weak var weakEvents: Broadcast<Int>?
        do {
            let events = Broadcast<Int>(replay: replay)
            weakEvents = events
            // A witness that takes one element, keeps the next and then drops every later one, in
            // `onDrop` on the thread that delivers it: that must be the sender's own thread, never a
            // consumer's. It subscribes before the sender starts (so it has no replay to take), and
            // its room for one keeps element 0 even if it is sent before the witness waits.
            let delivery = DeliveryThreads()
            let tookOne = Signal()
            let ended = Signal()
            let witness = Task {
                var iterator = events.stream(buffering: .dropNewest(1), onDrop: { _ in delivery.record() })
                    .makeAsyncIterator()
                let first = await iterator.next()
                tookOne.open()
                await ended.wait()
                var rest: [Int] = []
                while let element = await iterator.next() { rest.append(element) }
                return (first, rest)
            }
            await events.waitForSubscribers(1)
            let sender = TightLoopSender(events)
            delivery.watch { sender.isCurrentThread }
            await tookOne.wait()
            delivery.arm()
            let roundEnded = DispatchSemaphore(value: 0)
            let consumer = Task {
                for _ in 0..<rounds {
                    let ledger = SubscriberLedger()
                    let lifetime = ReleaseProbe(released)
                    let stream = events.stream(
                        buffering: policy,
                        onUndelivered: { element, reason in
                            withExtendedLifetime(lifetime) { ledger.record(element, reason) }
                        })
                    var taken = 0
                    for await element in stream {
                        ledger.deliver(element)
                        taken += 1
                        if taken == 3 { break }
                    }
                    ledgers.append(ledger)
                    roundEnded.signal()
                }
            }
            // Each round within 30 s: a hang is no progress at all, however loaded the machine.
            let finished = await Self.signalled(roundEnded, times: rounds, eachWithin: .seconds(30))
            #expect(
                finished,
                "replay \(replay), \(policy): a subscriber got no element within 30 s while a thread kept sending")
            let sent = sender.stop()
            events.finish()  // ends the round a failed run is stuck in; later rounds end at once
            await consumer.value
            ended.open()
            let (first, rest) = await witness.value
            #expect(first == 0)
            #expect(rest.count == 1, "the witness kept one element after its first and dropped the rest: \(rest)")
            #expect(sent > 0)
            #expect(
                delivery.elsewhere == 0,
                "replay \(replay), \(policy): \(delivery.elsewhere) of \(delivery.total) elements the sender sent were delivered by another thread"
            )
        }
        #expect(weakEvents == nil, "the broadcast is released")
        #expect(released.value == rounds, "every subscriber's stream is released")
        let all = ledgers.values
        #expect(all.count == rounds)
        for (round, ledger) in all.enumerated() {
            let check = ledger.summary()
            #expect(check.delivered == 3, "round \(round): took three")
            #expect(check.inOrder, "round \(round): delivered in the order sent")
            #expect(check.contiguous, "round \(round): delivered + dropped + undelivered == sent, each once (\(check))")
        }
    }
}

extension BroadcastBoundedWorkTests {
    /// The deterministic form of the case above: a new `.latest` subscriber's replay (2 elements
    /// into room for 1) calls its `onDrop`, and while it runs another thread sends 100 elements.
    /// Those are delivered by that thread's own sends, not by the subscriber's first `next()`
    /// (which would otherwise deliver whatever is sent for as long as it is sent).
    @Test func elementsSentWhileASubscriberTakesItsReplay_areDeliveredByTheirSender() async {
        weak var weakEvents: Broadcast<Int>?
        do {
            let events = Broadcast<Int>(replay: 2)
            weakEvents = events
            let delivery = DeliveryThreads()
            let tookOne = Signal()
            let ended = Signal()
            let witness = Task {
                var iterator = events.stream(buffering: .dropNewest(1), onDrop: { _ in delivery.record() })
                    .makeAsyncIterator()
                let first = await iterator.next()
                tookOne.open()
                await ended.wait()
                var rest: [Int] = []
                while let element = await iterator.next() { rest.append(element) }
                return (first, rest)
            }
            await events.waitForSubscribers(1)
            events.yield(0)
            await tookOne.wait()
            events.yield(1)
            events.yield(2)  // the replay is now [1, 2]
            let burst = BurstSender(events, elements: 100..<200)
            delivery.watch { burst.isCurrentThread }
            delivery.arm()
            let dropped = Collected<Int>()
            let stream = events.stream(
                buffering: .latest,
                onDrop: { element in
                    dropped.append(element)
                    if element == 1 { burst.sendAndWait() }  // while the replay is being taken
                })
            var iterator = stream.makeAsyncIterator()
            let first = await iterator.next()
            #expect(first == 199, "the latest element sent")
            #expect(
                dropped.values == [1] + [2] + Array(100..<199), "the replay's older element, then each superseded one")
            #expect(delivery.total == 100)
            #expect(
                delivery.elsewhere == 0,
                "\(delivery.elsewhere) of the 100 elements were delivered by the subscribing thread")
            events.finish()
            #expect(await iterator.next() == nil)
            ended.open()
            let (witnessFirst, rest) = await witness.value
            #expect(witnessFirst == 0)
            #expect(rest == [1], "its room held 1; 2 and the burst were dropped")
        }
        #expect(weakEvents == nil, "the broadcast is released")
    }
}

// Helpers of this suite.
extension BroadcastBoundedWorkTests {
    /// Sends a range of elements to a broadcast from a thread of its own, once, when asked.
    final class BurstSender: Sendable {
        nonisolated(unsafe) private var threadID: pthread_t?  // written by the thread before its first send
        private let go = DispatchSemaphore(value: 0)
        private let done = DispatchSemaphore(value: 0)

        init(_ events: Broadcast<Int>, elements: Range<Int>) {
            let thread = Thread { [self, weak events] in
                go.wait()
                threadID = pthread_self()
                if let events {
                    for element in elements { events.yield(element) }
                }
                done.signal()
            }
            thread.start()
        }

        var isCurrentThread: Bool {
            guard let threadID else { return false }
            return pthread_equal(threadID, pthread_self()) != 0
        }

        /// Lets the thread send its elements and waits until its last send has returned.
        func sendAndWait() {
            go.signal()
            let returned = done.wait(timeout: .now() + .seconds(30)) == .success
            #expect(returned, "the burst's sends never returned")
        }
    }

    /// Sends 0, 1, 2, … to a broadcast from a thread of its own, as fast as it can, until stopped.
    final class TightLoopSender: Sendable {
        private let stopRequested = LockedState(false)
        nonisolated(unsafe) private var sent = 0  // written by the thread before it signals `exited`
        // Written by the thread before its first send; read by handlers that a send calls (after it).
        nonisolated(unsafe) private var threadID: pthread_t?
        private let exited = DispatchSemaphore(value: 0)

        /// Whether the caller runs on the sender's thread.
        var isCurrentThread: Bool {
            guard let threadID else { return false }
            return pthread_equal(threadID, pthread_self()) != 0
        }

        init(_ events: Broadcast<Int>) {
            // Handed over through a box so that the thread releases the broadcast before it signals.
            let handedOver = LockedValue<Broadcast<Int>?>(events)
            let thread = Thread { [self] in
                threadID = pthread_self()
                var next = 0
                do {
                    let events = handedOver.take()!
                    while !stopRequested.withLock({ $0 }) {
                        for _ in 0..<64 {
                            events.yield(next)
                            next += 1
                        }
                    }
                }
                sent = next
                exited.signal()
            }
            thread.start()
        }

        /// Stops the thread, waits until it has returned from its last send, and returns how many
        /// elements it sent.
        func stop() -> Int {
            stopRequested.withLock { $0 = true }
            let returned = exited.wait(timeout: .now() + .seconds(60)) == .success
            #expect(returned, "the sender's send never returned")
            return sent
        }
    }

    /// What one subscriber was offered: the elements it took and those reported undelivered (with
    /// any reason). The sender sends consecutive integers, so the elements sent to a subscriber (its
    /// replay, then everything sent while it was subscribed) are a contiguous range.
    final class SubscriberLedger: Sendable {
        private struct State {
            var delivered: [Int] = []
            /// Count, smallest, largest, sum and sum of squares of every element accounted for: a
            /// contiguous range, each element once, without keeping them all.
            var count = 0
            var low = Int.max, high = Int.min
            var sum = 0, squares = 0

            mutating func add(_ element: Int) {
                count += 1
                low = min(low, element)
                high = max(high, element)
                sum &+= element
                squares &+= element &* element
            }
        }
        private let state = LockedState(State())

        func deliver(_ element: Int) {
            state.withLock {
                $0.delivered.append(element)
                $0.add(element)
            }
        }

        func record(_ element: Int, _ reason: UndeliveredReason) {
            state.withLock { $0.add(element) }
        }

        struct Summary: CustomStringConvertible {
            var delivered: Int
            var inOrder: Bool
            var contiguous: Bool
            var total: Int
            var range: ClosedRange<Int>?
            var description: String {
                "\(total) accounted for, range \(range.map(String.init(describing:)) ?? "empty")"
            }
        }

        func summary() -> Summary {
            let ledger = state.withLock { $0 }
            let inOrder = zip(ledger.delivered, ledger.delivered.dropFirst()).allSatisfy { $0 < $1 }
            guard ledger.count > 0 else {
                return Summary(delivered: 0, inOrder: true, contiguous: true, total: 0, range: nil)
            }
            // The sums of a range low...high, each element once.
            var expectedSum = 0
            var expectedSquares = 0
            for element in ledger.low...ledger.high {
                expectedSum &+= element
                expectedSquares &+= element &* element
            }
            let contiguous =
                ledger.high - ledger.low + 1 == ledger.count && ledger.sum == expectedSum
                && ledger.squares == expectedSquares
            return Summary(
                delivered: ledger.delivered.count, inOrder: inOrder, contiguous: contiguous, total: ledger.count,
                range: ledger.low...ledger.high)
        }
    }

    /// Counts, once armed, the elements a handler saw and those it saw off the sender's thread.
    final class DeliveryThreads: Sendable {
        private struct State {
            var isSenderThread: (@Sendable () -> Bool)?
            var armed = false
            var counts = (total: 0, elsewhere: 0)
        }
        private let state = LockedState(State())

        func watch(_ isSenderThread: @escaping @Sendable () -> Bool) {
            state.withLock { $0.isSenderThread = isSenderThread }
        }
        func arm() { state.withLock { $0.armed = true } }

        func record() {
            state.withLock {
                guard $0.armed, let isSenderThread = $0.isSenderThread else { return }
                $0.counts.total += 1
                if !isSenderThread() { $0.counts.elsewhere += 1 }
            }
        }

        var total: Int { state.withLock { $0.counts.total } }
        var elsewhere: Int { state.withLock { $0.counts.elsewhere } }
    }

    /// Counts its own release: captured by a stream's handler, it tells that the stream was released.
    final class ReleaseProbe: Sendable {
        private let counter: Counter
        init(_ counter: Counter) { self.counter = counter }
        deinit { counter.increment() }
    }

    /// Whether `semaphore` is signalled `times` times, each within `limit` of the one before,
    /// waited for on a thread outside the cooperative pool (a hung consumer may hold a pool
    /// thread). A watchdog, not a wait for behaviour: the work signals as soon as it has made
    /// progress, so a passing test never waits out the limit.
    static func signalled(
        _ semaphore: DispatchSemaphore, times: Int, eachWithin limit: DispatchTimeInterval
    ) async -> Bool {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                for _ in 0..<times where semaphore.wait(timeout: .now() + limit) != .success {
                    return continuation.resume(returning: false)
                }
                continuation.resume(returning: true)
            }
        }
    }
}
