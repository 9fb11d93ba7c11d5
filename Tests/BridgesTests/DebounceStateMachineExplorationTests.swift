import BridgesTesting
import Testing

@testable import Bridges

/// Every interleaving of `debounce`'s events, up to a bounded depth, on a virtual clock:
/// upstream elements, the timer task attached, ticking, sleeping and waking (or cancelled while
/// asleep), time advancing, the upstream ending or failing, and the teardown. Each event that
/// says it posted something has its emissions moved downstream in the same step, as the operator
/// does under its lock. After every event: an element is emitted only if it is the newest, and by
/// a timer only once its window has passed; elements in order, nothing after the end or after the
/// consumer left; at most one timer is live, timers are cancelled at most once, a pending element
/// always has a live timer to emit it (no lost wake-up); an event posts something exactly when it
/// says so and at most two events (the pending element and the end), and nothing stays posted
/// once the step is over. From every state: when the upstream ends normally the newest element
/// and then the end are delivered; when the consumer leaves, no timer is left sleeping.
@Suite("debounce: state machine exploration", .timeLimit(.minutes(3)))
struct DebounceStateMachineExplorationTests {
    @Test func everyInterleaving_keepsTheInvariants() {
        let tasks = (0..<3).map { _ in Task<Void, Never> {} }
        let report = exploreStateSpace(from: DebounceModel(tasks: tasks), depth: 13)
        #expect(report.violations.isEmpty, "\(report.violations.joined(separator: "\n"))")
        #expect(report.distinctStates >= 7250, "\(report)")
    }
}

private struct Boom: Error, Hashable {}

private struct DebounceModel: ExplorationModel {
    typealias Machine = DebounceStateMachine<Int, Boom, Int>
    static let interval = 2
    static let end = 5

    enum Event: Hashable, CustomStringConvertible {
        case element, attach
        case tick(Int)
        case wake(Int)
        case advance
        case upstreamEnds(failing: Bool)
        case teardown

        var description: String {
            switch self {
            case .element: "element"
            case .attach: "attach"
            case .tick(let timer): "tick(\(timer))"
            case .wake(let timer): "wake(\(timer))"
            case .advance: "advance"
            case .upstreamEnds(let failing): failing ? "upstreamFails" : "upstreamEnds"
            case .teardown: "teardown"
            }
        }
    }

    enum Upstream: Hashable {
        case running
        case attaching(Int)
        case ended, stopped
    }
    /// A timer task: before its first tick, asleep until a deadline, awake after it, or done.
    enum Timer: Hashable {
        case created
        case sleeping(until: Int)
        case awake(sleptUntil: Int)
        case done
    }

    let tasks: [Task<Void, Never>]
    var machine = Machine()
    var now = 0
    var upstream = Upstream.running
    var arrived: [(element: Int, at: Int)] = []
    var timers: [Timer] = []
    var cancels: [Int: Int] = [:]
    var terminated = false
    var failed = false
    var delivered: [String] = []

    init(tasks: [Task<Void, Never>]) { self.tasks = tasks }

    var enabledEvents: [Event] {
        var events: [Event] = []
        switch upstream {
        case .running:
            if arrived.count < 3 && timers.count < tasks.count { events.append(.element) }
            events += [.upstreamEnds(failing: false), .upstreamEnds(failing: true)]
        case .attaching: events.append(.attach)
        case .ended, .stopped: break
        }
        for (index, timer) in timers.enumerated() {
            switch timer {
            case .created, .awake: events.append(.tick(index))
            case .sleeping(let deadline): if now >= deadline || cancels[index] != nil { events.append(.wake(index)) }
            case .done: break
            }
        }
        if now < Self.end { events.append(.advance) }
        if !terminated { events.append(.teardown) }
        return events
    }

    var liveTimers: [Int] {
        timers.indices.filter { timers[$0] != .done && cancels[$0] == nil }
    }

    mutating func apply(_ event: Event) -> [String] {
        var broken: [String] = []
        switch event {
        case .element:
            let element = arrived.count + 1
            switch machine.elementArrived(element, deadline: now + Self.interval) {
            case .stop:
                upstream = .stopped
            case .none:
                arrived.append((element, now))
                if liveTimers.isEmpty { broken.append("an element found no timer to emit it, and none was started") }
            case .startTimer:
                arrived.append((element, now))
                timers.append(.created)
                upstream = .attaching(timers.count - 1)
            }
        case .attach:
            guard case .attaching(let index) = upstream else { return ["attach while not attaching"] }
            cancel(machine.attach(tasks[index]), &broken)
            upstream = .running
        case .tick(let index):
            let slept: Int?
            if case .awake(let deadline) = timers[index] { slept = deadline } else { slept = nil }
            switch machine.timerTick(sleptUntil: slept) {
            case .sleep(let deadline):
                timers[index] = .sleeping(until: deadline)
            case .fired(let mustEmit):
                timers[index] = .done
                guard let newest = arrived.last else { return ["a timer fired with nothing arrived"] }
                if now < newest.at + Self.interval {
                    broken.append("element \(newest.element) emitted at \(now), before its window ended")
                }
                emit(saying: mustEmit, after: event, &broken)
            case .stop:
                timers[index] = .done
            }
        case .wake(let index):
            guard case .sleeping(let deadline) = timers[index] else { return ["woke a timer that was not asleep"] }
            // A cancelled sleep throws: the timer task returns without asking again.
            timers[index] = cancels[index] != nil ? .done : .awake(sleptUntil: deadline)
        case .advance:
            now += 1
        case .upstreamEnds(let failing):
            upstream = .ended
            if failing && !terminated { failed = true }
            let (mustEmit, timer) = machine.upstreamEnded(failing ? Boom() : nil)
            cancel(timer, &broken)
            emit(saying: mustEmit, after: event, &broken)
        case .teardown:
            terminated = true
            cancel(machine.terminate(), &broken)
        }
        if cancels.values.contains(where: { $0 > 1 }) { broken.append("a timer was cancelled twice: \(cancels)") }
        if liveTimers.count > 1 { broken.append("timers \(liveTimers) are live at once") }
        // The operator decides emissions only after the events that return `mustEmit`: anything
        // left here would reach the stream in a later critical section, or never.
        if !machine.emissions.events.isEmpty {
            broken.append(
                "\(event) left \(machine.emissions.events.count) events posted, never decided into the stream")
        }
        if hasPending && !terminated && liveTimers.isEmpty && upstream != .attaching(timers.count - 1) {
            broken.append("an element is pending and no timer will emit it")
        }
        return broken
    }

    /// Moves the emissions downstream, as the operator does under its lock when `mustEmit`.
    mutating func emit(saying mustEmit: Bool, after event: Event, _ broken: inout [String]) {
        let posted = machine.emissions.events.count
        if mustEmit != (posted > 0) {
            broken.append("\(event) said mustEmit \(mustEmit) with \(posted) events posted")
        }
        // Bounded work per event: at most the pending element and the end.
        if posted > 2 { broken.append("\(event) posted \(posted) events") }
        guard mustEmit else { return }
        while let emitted = machine.emissions.events.popFirst() {
            if terminated { broken.append("\(emitted) delivered after the consumer left") }
            if delivered.last?.hasPrefix("end") == true { broken.append("\(emitted) delivered after the end") }
            switch emitted {
            case .element(let element):
                if element != arrived.last?.element {
                    broken.append("element \(element) delivered, not the newest (\(arrived.map(\.element)))")
                }
                if let last = delivered.last.flatMap(Int.init), element <= last {
                    broken.append("\(element) delivered after \(last)")
                }
                delivered.append("\(element)")
            case .finish(let failure):
                delivered.append(failure == nil ? "end" : "end(failure)")
            }
        }
    }

    /// Whether the machine holds an element not emitted yet: its private phase is `.pending`
    /// (read by reflection).
    var hasPending: Bool {
        guard let phase = Mirror(reflecting: machine).descendant("phase") else {
            preconditionFailure("DebounceStateMachine no longer has `phase`: update the model")
        }
        return Mirror(reflecting: phase).children.first?.label == "pending"
    }

    mutating func cancel(_ task: Task<Void, Never>?, _ broken: inout [String]) {
        guard let task else { return }
        guard let index = tasks.firstIndex(of: task), index < timers.count else {
            return broken.append("an unknown timer was cancelled")
        }
        cancels[index, default: 0] += 1
    }

    func checkEndings() -> [String] {
        var broken: [String] = []
        for teardown in [false, true] {
            var model = self
            var initiated = false
            for _ in 0..<40 {
                let events = model.enabledEvents
                let initiator: Event = teardown ? .teardown : .upstreamEnds(failing: false)
                var next: Event? = nil
                if !initiated, events.contains(initiator) {
                    initiated = true
                    next = initiator
                } else {
                    next = events.first { event in
                        switch event {
                        case .attach, .tick, .wake: true
                        default: false
                        }
                    }
                    if next == nil, teardown,
                        model.timers.contains(where: { if case .sleeping = $0 { true } else { false } }),
                        model.now < Self.end
                    {
                        next = .advance
                    }
                }
                guard let next else { break }
                broken += model.apply(next).map {
                    "\($0) (ending: \(teardown ? "teardown" : "upstream ends"), at \(next))"
                }
            }
            let ending = teardown ? "teardown" : "upstream ends"
            if !teardown && !model.terminated && !model.failed {
                if model.delivered.filter({ $0 == "end" }).count != 1 {
                    broken.append(
                        "\(ending): the end was delivered \(model.delivered.filter { $0 == "end" }.count) times")
                }
                if let newest = model.arrived.last, !model.delivered.contains("\(newest.element)") {
                    broken.append(
                        "\(ending): the newest element \(newest.element) was never delivered (\(model.delivered))")
                }
            }
            for index in model.timers.indices {
                if case .sleeping = model.timers[index], model.cancels[index] == nil {
                    broken.append("\(ending): timer \(index) is left asleep, never cancelled")
                }
            }
            if !model.machine.emissions.events.isEmpty {
                broken.append("\(ending): events posted, never decided into the stream")
            }
        }
        return broken
    }

    /// The machine with its (empty, checked after every event) emissions ring left out: a ring
    /// allocated once and drained since is the same state as none.
    var key: String {
        var machine = machine
        machine.emissions.events = StreamRing()
        return
            "\(machine)|\(now)|\(upstream)|\(arrived.map { "\($0.element)@\($0.at)" })|\(timers)|\(cancels.sorted { $0.key < $1.key })|\(terminated)\(failed)\(delivered)"
    }
}
