import BridgesTesting
import Testing

@testable import Bridges

/// Every interleaving of `shared()`'s events, up to a bounded depth: consumers joining,
/// subscribing and leaving; the iterating task receiving the upstream's end and returning (a
/// stopped task too, as late as any other event: an upstream slow to notice its cancellation);
/// the stop timer running out. With and without a stop timeout. After every event: at most one
/// iteration's task alive (a new one starts only after the previous returned), the machine's
/// counts match the consumers, an iteration starts only once every consumer of its generation
/// subscribed, a consumer belongs to the generation current when it joined (never to one whose
/// end was received before), tasks and timers are cancelled at most once and only when their
/// generation is over, and no iteration owed to consumers is left unstarted with nothing to start
/// it. From every state: when every consumer leaves and every task returns, nothing runs; when
/// the old tasks return, the current generation's consumers are being served.
@Suite("shared(): state machine exploration", .timeLimit(.minutes(3)))
struct SharedStateMachineExplorationTests {
    @Test(arguments: [false, true])
    func everyInterleaving_keepsTheInvariants(stopTimeout: Bool) {
        let report = exploreStateSpace(from: SharedModel(stopTimeout: stopTimeout), depth: 14)
        #expect(report.violations.isEmpty, "\(report.violations.joined(separator: "\n"))")
        // 3 320 states without a stop timeout, 5 181 with one.
        #expect(report.distinctStates >= 3_000, "\(report)")
    }
}

/// A task's or a timer's token: only its identity matters to the machine.
private final class Ref: CustomStringConvertible {
    let id: Int
    init(_ id: Int) { self.id = id }
    var description: String { "#\(id)" }
}

private struct SharedModel: ExplorationModel {
    typealias Machine = SharedStateMachine<Int, Ref, Ref>

    enum Event: Hashable, CustomStringConvertible {
        case join
        case subscribed(Int)
        case leave(Int)
        case iterationEnds(Int)
        case iterationReturns(Int)
        case timerFires(Int)

        var description: String {
            switch self {
            case .join: "join"
            case .subscribed(let consumer): "subscribed(c\(consumer))"
            case .leave(let consumer): "leave(c\(consumer))"
            case .iterationEnds(let pump): "ends(p\(pump))"
            case .iterationReturns(let pump): "returns(p\(pump))"
            case .timerFires(let timer): "fires(t\(timer))"
            }
        }
    }

    enum ConsumerStatus: Hashable { case subscribing, subscribed, left }
    struct Consumer: Hashable {
        var generation: UInt64
        var status: ConsumerStatus
        /// It received its generation's end (the fan-out finished while it was subscribed).
        var ended = false
    }
    enum PumpStatus: Hashable { case running, ended, returned }
    struct Pump: Hashable {
        var generation: UInt64
        var status: PumpStatus
        var cancels = 0
    }
    struct Timer: Hashable {
        var cancels = 0
        var fired = false
    }

    let stopTimeout: Bool
    var machine = Machine(fanout: 0)
    var consumers: [Consumer] = []
    var pumps: [Pump] = []
    var timers: [Timer] = []
    var fanouts = 1
    /// Fan-out ids released so far (each once, each of a generation that is over).
    var released: [Int] = []
    /// Generations whose end the iterating task received.
    var endedGenerations: Set<UInt64> = []

    init(stopTimeout: Bool) { self.stopTimeout = stopTimeout }

    var enabledEvents: [Event] {
        var events: [Event] = []
        if consumers.count < 4 { events.append(.join) }
        for (index, consumer) in consumers.enumerated() {
            switch consumer.status {
            case .subscribing: events.append(.subscribed(index))
            case .subscribed: events.append(.leave(index))
            case .left: break
            }
        }
        for (index, pump) in pumps.enumerated() {
            switch pump.status {
            case .running where endedGenerations.count < 2 || pump.cancels > 0: events.append(.iterationEnds(index))
            case .ended: events.append(.iterationReturns(index))
            default: break
            }
        }
        for (index, timer) in timers.enumerated() where !timer.fired && timer.cancels == 0 {
            events.append(.timerFires(index))
        }
        return events
    }

    mutating func apply(_ event: Event) -> [String] {
        var broken: [String] = []
        let action: Machine.Action
        switch event {
        case .join:
            let (fanout, generation, joined) = machine.join()
            if generation != machine.generation {
                broken.append("joined generation \(generation), current is \(machine.generation)")
            }
            if fanout != fanoutID(of: generation) {
                broken.append("joined fan-out \(fanout) for generation \(generation)")
            }
            if endedGenerations.contains(generation) {
                broken.append("joined generation \(generation) after its end was received")
            }
            consumers.append(Consumer(generation: generation, status: .subscribing))
            action = joined
        case .subscribed(let index):
            consumers[index].status = .subscribed
            // Subscribed to a fan-out that already finished: it receives the end at once.
            if endedGenerations.contains(consumers[index].generation) { consumers[index].ended = true }
            action = machine.subscribed(consumers[index].generation, makePump: makePump)
        case .leave(let index):
            consumers[index].status = .left
            action = machine.leave(
                consumers[index].generation, stopTimeout: stopTimeout, makeTimer: makeTimer, makeFanout: makeFanout)
        case .iterationEnds(let index):
            pumps[index].status = .ended
            let generation = pumps[index].generation
            action = machine.iterationEnded(generation, makeFanout: makeFanout)
            if pumps[index].cancels == 0 {
                endedGenerations.insert(generation)
                for consumer in consumers.indices
                where consumers[consumer].generation == generation && consumers[consumer].status == .subscribed {
                    consumers[consumer].ended = true
                }
            }
        case .iterationReturns(let index):
            pumps[index].status = .returned
            action = machine.iterationReturned(pumps[index].generation, makePump: makePump)
        case .timerFires(let index):
            timers[index].fired = true
            action = machine.stopTimerFired(timerRefs[index], makeFanout: makeFanout)
        }
        act(action, after: event, &broken)
        return broken + invariants()
    }

    // The stand-ins the machine is handed, by index.
    var pumpRefs: [Ref] = []
    var timerRefs: [Ref] = []
    var pendingPump: Ref?
    var pendingTimer: Ref?

    private func fanoutID(of generation: UInt64) -> Int? {
        generation == machine.generation ? machine.fanout : nil
    }

    private var makePump: () -> Ref {
        let ref = Ref(pumpRefs.count)
        return { ref }
    }
    private var makeTimer: () -> Ref {
        let ref = Ref(timerRefs.count)
        return { ref }
    }
    private var makeFanout: () -> Int {
        let id = fanouts
        return { id }
    }

    mutating func act(_ action: Machine.Action, after event: Event, _ broken: inout [String]) {
        if let timer = action.cancelTimer {
            timers[timer.id].cancels += 1
            if timers[timer.id].cancels > 1 { broken.append("\(event): timer t\(timer.id) cancelled twice") }
        }
        if let pump = action.cancelPump {
            pumps[pump.id].cancels += 1
            if pumps[pump.id].cancels > 1 { broken.append("\(event): task p\(pump.id) cancelled twice") }
            if pumps[pump.id].generation == machine.generation {
                broken.append("\(event): task p\(pump.id) cancelled while its generation is current")
            }
        }
        if let timer = action.startTimer {
            guard timer.id == timerRefs.count else { return broken.append("\(event): an unknown timer started") }
            timerRefs.append(timer)
            timers.append(Timer())
            if !stopTimeout { broken.append("\(event): a stop timer started without a stop timeout") }
        }
        if let (pump, generation, fanout) = action.start {
            guard pump.id == pumpRefs.count else { return broken.append("\(event): an unknown task started") }
            pumpRefs.append(pump)
            pumps.append(Pump(generation: generation, status: .running))
            if generation != machine.generation {
                broken.append("\(event): started generation \(generation), current is \(machine.generation)")
            }
            if fanout != machine.fanout {
                broken.append("\(event): started into fan-out \(fanout), current is \(machine.fanout)")
            }
            if consumers.contains(where: { $0.generation == generation && $0.status == .subscribing }) {
                broken.append("\(event): generation \(generation) started before all its consumers subscribed")
            }
        }
        if machine.fanout == fanouts { fanouts += 1 }  // a fresh fan-out was made
        if let fanout = action.released {
            if released.contains(fanout) { broken.append("\(event): fan-out \(fanout) released twice") }
            if fanout == machine.fanout { broken.append("\(event): the current fan-out was released") }
            released.append(fanout)
        }
    }

    func invariants() -> [String] {
        var broken: [String] = []
        let alive = pumps.indices.filter { pumps[$0].status != .returned }
        if alive.count > 1 {
            broken.append("\(alive.count) iterations' tasks alive at once: \(alive.map { "p\($0)" })")
        }
        let current = consumers.filter { $0.generation == machine.generation && $0.status != .left }
        if machine.consumers != current.count {
            broken.append(
                "the machine counts \(machine.consumers) consumers, \(current.count) are in generation \(machine.generation)"
            )
        }
        if current.contains(where: \.ended) { broken.append("a consumer of the current generation received an end") }
        switch machine.phase {
        case .idle:
            if !current.isEmpty { broken.append("idle with consumers") }
        case .pending(_, let subscribing):
            if subscribing != current.filter({ $0.status == .subscribing }).count {
                broken.append("pending counts \(subscribing) subscribing")
            }
            if subscribing == 0 && machine.unreturned == nil {
                broken.append("an iteration is owed and nothing will start it")
            }
            if machine.unreturned != nil && alive.count != 1 { broken.append("waiting for a task that is not alive") }
        case .running(let pump, let count, let timer):
            if machine.unreturned != nil { broken.append("running while another iteration's task is alive") }
            if alive != [pump.id] || pumps[pump.id].generation != machine.generation {
                broken.append("running p\(pump.id), alive: \(alive)")
            }
            if count == 0 && timer == nil { broken.append("running for nobody, with no stop timer") }
            if count > 0 && timer != nil { broken.append("a stop timer runs while consumers are there") }
        }
        if let unreturned = machine.unreturned, !alive.contains(where: { pumps[$0].generation == unreturned }) {
            broken.append("generation \(unreturned) unreturned, but its task returned")
        }
        return broken
    }

    func checkEndings() -> [String] {
        var broken: [String] = []
        // The old tasks return and every consumer subscribes: whoever is in the current
        // generation is being served by a running iteration.
        var served = self
        for _ in 0..<20 {
            guard
                let event = served.enabledEvents.first(where: { event in
                    switch event {
                    case .subscribed: true
                    case .iterationEnds(let pump):
                        served.pumps[pump].cancels > 0 || served.pumps[pump].generation != served.machine.generation
                    case .iterationReturns: true
                    default: false
                    }
                })
            else { break }
            broken += served.apply(event).map { "\($0) (ending: served, at \(event))" }
        }
        let waiting = served.consumers.filter { $0.generation == served.machine.generation && $0.status != .left }
        if !waiting.isEmpty && !served.machine.isRunning {
            broken.append("served: \(waiting.count) consumers of the current generation and no iteration runs")
        }
        // Everyone leaves, every task returns, every timer runs out: nothing runs.
        var over = self
        for _ in 0..<40 {
            guard
                let event = over.enabledEvents.first(where: { event in
                    switch event {
                    case .join: false
                    case .iterationEnds(let pump): over.pumps[pump].cancels > 0
                    default: true
                    }
                })
            else { break }
            broken += over.apply(event).map { "\($0) (ending: over, at \(event))" }
        }
        if over.machine.isRunning {
            broken.append("over: an iteration still runs with everyone gone: \(over.machine.phase)")
        }
        if let alive = over.pumps.firstIndex(where: { $0.status != .returned }) {
            broken.append("over: task p\(alive) never returned (\(over.pumps[alive]))")
        }
        return broken
    }

    var key: String {
        "\(machine.phase)|\(machine.generation)|\(machine.fanout)|\(String(describing: machine.unreturned))|\(consumers)|\(pumps)|\(timers)|\(released)|\(endedGenerations.sorted())"
    }
}
