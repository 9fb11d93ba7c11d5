import Testing

@testable import Bridges

/// Every interleaving of the broadcast state machine's events up to a bounded depth, breadth
/// first, with states deduplicated: subscribe under each policy class, yield, send's wait, its
/// task's cancellation and its resumption (what the woken send decides and answers), the
/// pulling task's wait for room and its cancellation, a consumer taking an element (and its stream reporting room), a consumer
/// leaving, finish, waitForSubscribers and its cancellation, the producer's demand handler.
/// Subscribers' streams are modelled (buffer, policy, room reported as the engine reports it).
/// After every step: each continuation resumed at most once, and none left waiting once it may
/// go on; delivered + dropped + undelivered + buffered == sent to each subscriber, in order; a
/// waiting subscriber's credit never exceeds its stream's room; a producer that a yield told to
/// stop is told of room again once there is some; a send's answer says what happened to its
/// element (`.enqueued`/`.stopProducing`: every subscriber of the moment got it; `.terminated`:
/// nobody did, and a send that began before the finish is not reported as misuse); and no event
/// does more than its own work (a send yields once per subscriber, a subscription at most its replay).
@Suite("Broadcast: state machine exploration", .timeLimit(.minutes(3)))
struct BroadcastStateMachineExplorationTests {
    typealias Machine = BroadcastStateMachine<Int, Never, Int, Int>

    enum Policy: CaseIterable, Hashable {
        case latest, unbounded, suspending1
        var capacity: Int {
            switch self {
            case .latest: 1
            case .unbounded: .max
            case .suspending1: 1
            }
        }
        var isWaiting: Bool { self == .suspending1 }
    }

    /// A subscriber's stream, as the engine keeps it.
    struct Stream: Hashable {
        var policy: Policy
        var id: UInt64 = 0
        var buffer: [Int] = []
        var sent = 0, delivered = 0, dropped = 0, undelivered = 0
        var taken: [Int] = []
        /// Every element yielded to this stream (kept, dropped or undelivered).
        var got: [Int] = []
        var finished = false, left = false
        /// Demand reported to the broadcast and not yet used by an element (waiting policy only).
        var granted = 0
        var room: Int { policy.capacity == .max ? .max : policy.capacity - buffer.count }

        mutating func yield(_ element: Int) {
            sent += 1
            got.append(element)
            guard !finished, !left else { return undelivered += 1 }
            if policy.isWaiting, granted > 0 { granted -= 1 }
            if policy == .latest, buffer.count == 1 {
                buffer.removeFirst()
                dropped += 1
            }
            buffer.append(element)
        }

        /// The room to report now (the engine's rule: only room beyond what was reported).
        mutating func demandToReport() -> Int? {
            guard policy.isWaiting, !finished, !left, room > granted else { return nil }
            defer { granted = room }
            return room - granted
        }
    }

    /// An `await send` that had to wait for room: its element, the continuation it waits on,
    /// whether its task was cancelled, and whether it has answered.
    struct Sender: Hashable {
        var value: Int
        var continuation: Int
        var cancelled = false
        var answered = false
    }

    struct World {
        var machine = Machine(replay: 2)
        var senders: [Sender] = []
        /// A yield or send began while another send waited: two producers, so the order of
        /// their elements is not defined (each one's own still is; the model checks no duplicates).
        var concurrentProducers = false
        var streams: [Stream] = []
        var nextValue = 0
        var nextContinuation = 0
        /// Continuations handed to the machine and not yet resumed, and how often each was resumed.
        var waiting: Set<Int> = []
        var resumed: [Int: Int] = [:]
        var misuseReports = 0
        /// A yield answered `.stopProducing` to a producer with a demand handler, and the handler
        /// has not been called since: the producer is paused until it is.
        var producerPaused = false
        var failure: String?
        /// The events that led here (not part of the state).
        var path: [Event] = []

        mutating func resume(_ continuations: [Int], _ event: String) {
            for continuation in continuations {
                resumed[continuation, default: 0] += 1
                if resumed[continuation]! > 1 { failure = "\(event): continuation \(continuation) resumed twice" }
                waiting.remove(continuation)
            }
        }

        mutating func newContinuation() -> Int {
            nextContinuation += 1
            return nextContinuation
        }

        /// The stream reports room to the broadcast (as its demand handler does).
        mutating func reportDemand(_ index: Int, _ event: String) {
            guard let count = streams[index].demandToReport() else { return }
            wake(machine.subscriberDemand(streams[index].id, count), event)
        }

        /// Acts on what room that came back wakes, as the broadcast does after the lock.
        mutating func wake(_ room: Machine.RoomAction, _ event: String) {
            resume(room.senders + (room.puller.map { [$0] } ?? []), event)
            reportToProducer(room.demand, event)
        }

        /// The producer's demand handler is called: a paused producer goes on.
        mutating func reportToProducer(_ demand: (Machine.DemandHandler, Int)?, _ event: String) {
            guard let (_, count) = demand else { return }
            if count <= 0 { failure = "\(event): reported demand \(count) to the producer" }
            producerPaused = false
        }

        /// The state, without the path that led to it.
        struct Key: Hashable {
            var finished: Bool, nextID: UInt64
            var subscribers: [UInt64], sinks: [Int], creditIDs: [UInt64], credits: [Int], replay: [Int]
            var waiterCounts: [Int], waiters: [Int], roomWaiters: [Int], puller: Int?, granted: Int,
                hasDemandHandler: Bool
            var streams: [Stream], nextValue: Int, waiting: [Int], reportedMisuse: Bool, producerPaused: Bool
            var senders: [Sender], concurrentProducers: Bool
        }

        var key: Key {
            Key(
                finished: machine.isFinished,
                nextID: machine.nextID,
                subscribers: machine.subscribers.map(\.id), sinks: machine.subscribers.map(\.sink),
                creditIDs: machine.credits.map(\.id), credits: machine.credits.map(\.credit), replay: machine.replay,
                waiterCounts: machine.waiters.map(\.count), waiters: machine.waiters.map(\.continuation),
                roomWaiters: machine.roomWaiters.map(\.continuation), puller: machine.puller, granted: machine.granted,
                hasDemandHandler: machine.demandHandler != nil,
                streams: streams, nextValue: nextValue, waiting: waiting.sorted(), reportedMisuse: misuseReports > 0,
                producerPaused: producerPaused, senders: senders, concurrentProducers: concurrentProducers
            )
        }
    }

    enum Event {
        case subscribe(Policy)
        case yield, send, cancelSenders, pull, cancelPull
        case resumeSender(Int)
        case take(Int)
        case leave(Int)
        case finish
        case waitForSubscribers(Int)
        case cancelWaits, onDemand
    }

    static func events(in world: World) -> [Event] {
        var events: [Event] = Policy.allCases.map { .subscribe($0) }
        events += [
            .yield, .send, .cancelSenders, .pull, .cancelPull, .finish, .waitForSubscribers(1),
            .waitForSubscribers(2),
            .cancelWaits, .onDemand,
        ]
        for index in world.streams.indices { events += [.take(index), .leave(index)] }
        for index in world.senders.indices { events.append(.resumeSender(index)) }
        return events
    }

    /// Runs `event`, acting as the broadcast does after the lock; checks the event's own bounds.
    static func step(_ world: inout World, _ event: Event) {
        let name = "\(event)"
        switch event {
        case .subscribe(let policy):
            guard world.streams.count < 3 else { return }
            let index = world.streams.count
            world.streams.append(Stream(policy: policy))
            switch world.machine.subscribe(index, waiting: policy.isWaiting) {
            case .subscribed(let id, let replay, let waiters):
                if replay.count > world.machine.replayCount { world.failure = "\(name): replay of \(replay.count)" }
                world.streams[index].id = id
                for element in replay { world.streams[index].yield(element) }
                world.resume(waiters, name)
                world.reportDemand(index, name)  // the builder registers its demand handler after the replay
            case .finished(let replay, _):
                for element in replay { world.streams[index].yield(element) }
                world.streams[index].finished = true
            }
        case .yield:
            guard world.nextValue < 3 else { return }
            let value = world.nextValue
            world.nextValue += 1
            if world.senders.contains(where: { !$0.answered }) { world.concurrentProducers = true }
            let action = world.machine.yield(value)
            if case .fanOut(.stopProducing, _) = action, world.machine.demandHandler != nil {
                world.producerPaused = true
            }
            send(&world, value, action, waited: false, name)
        case .send:
            guard world.nextValue < 3 else { return }
            let value = world.nextValue
            world.nextValue += 1
            if world.senders.contains(where: { !$0.answered }) { world.concurrentProducers = true }
            if let action = world.machine.sendIfRoom(value) {
                send(&world, value, action, waited: false, name)
                checkAnswer(&world, value, action, cancelled: false, name)
            } else {
                let continuation = world.newContinuation()
                world.senders.append(Sender(value: value, continuation: continuation))
                if world.machine.waitForRoom(id: UInt64(continuation), continuation) {
                    world.waiting.insert(continuation)
                } else {
                    world.failure = "\(name): no room, then room without any event"
                }
            }
        case .cancelSenders:
            // The tasks of the waiting sends are cancelled: each still waiting is resumed.
            for index in world.senders.indices where !world.senders[index].answered {
                world.senders[index].cancelled = true
                if let continuation = world.machine.cancelRoomWait(id: UInt64(world.senders[index].continuation)) {
                    world.resume([continuation], name)
                }
            }
        case .resumeSender(let index):
            // A send whose wait ended goes on, as `Broadcast.send` does after `waitForRoom`.
            let sender = world.senders[index]
            guard !sender.answered, !world.waiting.contains(sender.continuation) else { return }
            if let action = world.machine.sendOnceWoken(sender.value, cancelled: sender.cancelled) {
                world.senders[index].answered = true
                send(&world, sender.value, action, waited: true, name)
                checkAnswer(&world, sender.value, action, cancelled: sender.cancelled, name)
            } else {
                let continuation = world.newContinuation()
                world.senders[index].continuation = continuation
                if world.machine.waitForRoom(id: UInt64(continuation), continuation) {
                    world.waiting.insert(continuation)
                } else {
                    world.resume([continuation], name)  // room, or the end, at once: it goes on
                }
            }
        case .pull:
            // The one pulling task (a shared upstream's iteration) waits for room before it pulls.
            guard world.machine.puller == nil else { return }
            let continuation = world.newContinuation()
            if world.machine.waitToPull(continuation) {
                world.waiting.insert(continuation)
            } else {
                world.resume([continuation], name)
            }
        case .cancelPull:
            if let continuation = world.machine.cancelPull() { world.resume([continuation], name) }
        case .take(let index):
            guard !world.streams[index].buffer.isEmpty else { return }
            let element = world.streams[index].buffer.removeFirst()
            world.streams[index].taken.append(element)
            world.streams[index].delivered += 1
            world.reportDemand(index, name)
        case .leave(let index):
            guard !world.streams[index].left else { return }
            world.streams[index].undelivered += world.streams[index].buffer.count
            world.streams[index].buffer = []
            world.streams[index].left = true
            world.wake(world.machine.unsubscribe(world.streams[index].id).room, name)
        case .finish:
            guard let action = world.machine.finish(nil) else { return }
            if action.subscribers.count > world.streams.count {
                world.failure = "\(name): finished \(action.subscribers.count) sinks"
            }
            for subscriber in action.subscribers { world.streams[subscriber.sink].finished = true }
            world.resume(action.waiters + action.senders, name)
        case .waitForSubscribers(let count):
            let continuation = world.newContinuation()
            if world.machine.wait(id: UInt64(continuation), count: count, continuation) {
                world.waiting.insert(continuation)
            } else {
                world.resume([continuation], name)
            }
        case .cancelWaits:
            for waiter in world.machine.waiters {
                if let continuation = world.machine.cancelWait(id: waiter.id) { world.resume([continuation], name) }
            }
        case .onDemand:
            guard world.machine.demandHandler == nil else { return }
            let (initial, _) = world.machine.registerDemand { _ in }
            if let initial, initial <= 0 { world.failure = "\(name): reported demand \(initial)" }
            if initial != nil { world.producerPaused = false }
        }
    }

    static func send(_ world: inout World, _ value: Int, _ action: Machine.YieldAction, waited: Bool, _ name: String) {
        switch action {
        case .fanOut(_, let evicted):
            if let evicted, evicted >= value { world.failure = "\(name): evicted \(evicted) for \(value)" }
            let subscribers = world.machine.subscribers
            if subscribers.count > world.streams.count { world.failure = "\(name): fan-out of \(subscribers.count)" }
            for subscriber in subscribers { world.streams[subscriber.sink].yield(value) }
        case .reportSendAfterFinish:
            if waited { world.failure = "\(name): a send that began before the finish was reported as misuse" }
            world.misuseReports += 1
        case .finishedWhileWaiting:
            if !waited { world.failure = "\(name): a yield or a send that did not wait answered finishedWhileWaiting" }
        }
    }

    /// A send's answer says what happened to its element: `.enqueued` or `.stopProducing`, every
    /// subscriber of the moment got it; `.terminated`, the broadcast was finished and nobody did.
    static func checkAnswer(
        _ world: inout World, _ value: Int, _ action: Machine.YieldAction, cancelled: Bool, _ name: String
    ) {
        let reached = world.streams.filter { $0.got.contains(value) }.count
        switch Machine.answer(toSend: action, cancelled: cancelled) {
        case .enqueued, .stopProducing:
            let subscribed = world.machine.subscribers.count
            if reached != subscribed {
                world.failure =
                    "\(name): answered delivered for \(value), which reached \(reached) of \(subscribed) subscribers"
            }
        case .terminated:
            if !world.machine.isFinished || reached > 0 {
                world.failure = "\(name): answered terminated for \(value), which reached \(reached) subscribers"
            }
        case .dropped:
            world.failure = "\(name): a send answered dropped"
        }
    }

    /// What must hold after every step.
    static func check(_ world: World) -> String? {
        if let failure = world.failure { return failure }
        if world.misuseReports > 0 && !world.machine.isFinished { return "send reported as after finish while open" }
        let machine = world.machine
        for stream in world.streams {
            let accounted = stream.delivered + stream.dropped + stream.undelivered + stream.buffer.count
            if accounted != stream.sent {
                return "stream \(stream.id): \(accounted) accounted for, \(stream.sent) sent"
            }
            let seen = stream.taken + stream.buffer
            if (!world.concurrentProducers && seen != seen.sorted()) || Set(seen).count != seen.count {
                return "stream \(stream.id): order \(seen)"
            }
            if let credit = machine.credits.first(where: { $0.id == stream.id })?.credit, credit > max(stream.room, 0) {
                return "stream \(stream.id): credit \(credit) beyond room \(stream.room)"
            }
        }
        // No waiter left without a wake-up.
        if case .finished = machine.phase {
            if !world.waiting.isEmpty { return "finished with \(world.waiting.sorted()) still waiting" }
            if !machine.subscribers.isEmpty || !machine.credits.isEmpty { return "finished with subscribers kept" }
        }
        for waiter in machine.waiters where machine.subscribers.count >= waiter.count {
            return "a waiter for \(waiter.count) subscribers left waiting with \(machine.subscribers.count)"
        }
        // A producer told to stop hears again once there is room (the handler must not be
        // skipped because of demand reported before the stop).
        if !machine.isFinished, machine.demandHandler != nil, world.producerPaused, machine.available > 0 {
            return "the producer left paused with room \(machine.available)"
        }
        if !machine.roomWaiters.isEmpty, machine.available > 0 {
            return "a sender left waiting with room \(machine.available)"
        }
        if machine.puller != nil, machine.available > 0 {
            return "the pulling task left waiting with room \(machine.available)"
        }
        let handed = Set(
            machine.waiters.map(\.continuation) + machine.roomWaiters.map(\.continuation)
                + (machine.puller.map { [$0] } ?? []))
        if handed != world.waiting { return "continuations held \(handed.sorted()), waiting \(world.waiting.sorted())" }
        return nil
    }

    @Test func everyInterleavingToDepth6_keepsTheInvariants() {
        let depth = 6
        var seen: Set<World.Key> = [World().key]
        var frontier = [World()]
        var explored = 1
        var transitions = 0
        for _ in 0..<depth {
            var next: [World] = []
            for world in frontier {
                for event in Self.events(in: world) {
                    var successor = world
                    Self.step(&successor, event)
                    successor.path.append(event)
                    transitions += 1
                    if let violation = Self.check(successor) {
                        Issue.record("after \(successor.path): \(violation)")
                        return
                    }
                    if seen.insert(successor.key).inserted {
                        next.append(successor)
                        explored += 1
                    }
                }
            }
            frontier = next
        }
        print("Broadcast state machine: \(explored) distinct states, \(transitions) transitions, depth \(depth)")
        #expect(explored > 10_000, "the exploration reached \(explored) states")
    }
}
