import BridgesTesting
import Testing

@testable import Bridges

/// Every interleaving of `mapLatest`'s events, up to a bounded depth: upstream elements (each
/// superseding the transform before it), each transform task attached, starting and finishing
/// (with a result or a failure, cancelled or not), the upstream ending or failing, and the
/// teardown. Each event that says it posted something has its emissions moved downstream in the
/// same step, as the operator does under its lock. After every event: each transform task
/// cancelled at most once, only the current element's result delivered, results in order,
/// nothing after the end or after the consumer left, the end delivered at most once, an event
/// posts something exactly when it says so and at most two events (bounded work), and nothing
/// stays posted once the step is over. From every state: when the upstream ends, the last
/// element's result and then the end are delivered; when the consumer leaves, every transform
/// still running is cancelled.
@Suite("mapLatest: state machine exploration", .timeLimit(.minutes(3)))
struct MapLatestStateMachineExplorationTests {
    @Test func everyInterleaving_keepsTheInvariants() {
        let tasks = (0..<3).map { _ in Task<Void, Never> {} }
        // Deep enough to reach every state of three elements (none is new after 14 events).
        let report = exploreStateSpace(from: MapLatestModel(tasks: tasks), depth: 16)
        #expect(report.violations.isEmpty, "\(report.violations.joined(separator: "\n"))")
        #expect(report.distinctStates >= 850, "\(report)")
    }
}

private struct Boom: Error, Hashable {}

private struct MapLatestModel: ExplorationModel {
    typealias Machine = MapLatestStateMachine<Int, Boom>

    enum Event: Hashable, CustomStringConvertible {
        case element, attach
        case start(Int)
        case finish(Int, failing: Bool)
        case upstreamEnds(failing: Bool)
        case teardown

        var description: String {
            switch self {
            case .element: "element"
            case .attach: "attach"
            case .start(let generation): "start(\(generation))"
            case .finish(let generation, let failing): failing ? "fail(\(generation))" : "finish(\(generation))"
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
    enum Transform: Hashable { case created, running, done }

    let tasks: [Task<Void, Never>]
    var machine = Machine()
    var upstream = Upstream.running
    var arrived = 0
    var transforms: [Int: Transform] = [:]
    var attached: Set<Int> = []
    var cancels: [Int: Int] = [:]
    var terminated = false
    var delivered: [String] = []

    init(tasks: [Task<Void, Never>]) { self.tasks = tasks }

    var enabledEvents: [Event] {
        var events: [Event] = []
        switch upstream {
        case .running:
            if arrived < tasks.count { events.append(.element) }
            events += [.upstreamEnds(failing: false), .upstreamEnds(failing: true)]
        case .attaching: events.append(.attach)
        case .ended, .stopped: break
        }
        for (generation, pc) in transforms.sorted(by: { $0.key < $1.key }) {
            switch pc {
            case .created: events.append(.start(generation))
            case .running: events += [.finish(generation, failing: false), .finish(generation, failing: true)]
            case .done: break
            }
        }
        if !terminated { events.append(.teardown) }
        return events
    }

    mutating func apply(_ event: Event) -> [String] {
        var broken: [String] = []
        switch event {
        case .element:
            guard let (generation, superseded) = machine.elementArrived() else {
                upstream = .stopped
                break
            }
            arrived += 1
            if generation != arrived { broken.append("generation \(generation) for element \(arrived)") }
            cancel(superseded, &broken)
            transforms[generation] = .created
            upstream = .attaching(generation)
        case .attach:
            guard case .attaching(let generation) = upstream else { return ["attach while not attaching"] }
            attached.insert(generation)
            cancel(machine.attach(tasks[generation - 1], generation: generation), &broken)
            upstream = .running
        case .start(let generation):
            transforms[generation] = machine.mayStart(generation: generation) ? .running : .done
        case .finish(let generation, let failing):
            transforms[generation] = .done
            let mustEmit = machine.transformFinished(
                generation: generation, failing ? .failure(Boom()) : .success(generation))
            emit(saying: mustEmit, after: event, &broken)
        case .upstreamEnds(let failing):
            upstream = .ended
            let (mustEmit, cancelled) = machine.upstreamEnded(failing ? Boom() : nil)
            cancel(cancelled, &broken)
            emit(saying: mustEmit, after: event, &broken)
        case .teardown:
            terminated = true
            cancel(machine.terminate(), &broken)
        }
        if cancels.values.contains(where: { $0 > 1 }) {
            broken.append("a transform task was cancelled twice: \(cancels)")
        }
        // The operator decides emissions only after the events that return `mustEmit`: anything
        // left here would reach the stream in a later critical section, or never.
        if !machine.emissions.events.isEmpty {
            broken.append(
                "\(event) left \(machine.emissions.events.count) events posted, never decided into the stream")
        }
        return broken
    }

    /// Moves the emissions downstream, as the operator does under its lock when `mustEmit`.
    mutating func emit(saying mustEmit: Bool, after event: Event, _ broken: inout [String]) {
        let posted = machine.emissions.events.count
        if mustEmit != (posted > 0) {
            broken.append("\(event) said mustEmit \(mustEmit) with \(posted) events posted")
        }
        // Bounded work per event: at most the current result and the end.
        if posted > 2 { broken.append("\(event) posted \(posted) events") }
        guard mustEmit else { return }
        while let emitted = machine.emissions.events.popFirst() {
            if terminated { broken.append("\(emitted) delivered after the consumer left") }
            if delivered.last?.hasPrefix("end") == true { broken.append("\(emitted) delivered after the end") }
            switch emitted {
            case .element(let output):
                if output != arrived {
                    broken.append("the result of element \(output) delivered after element \(arrived) arrived")
                }
                if let last = delivered.last.flatMap(Int.init), output <= last {
                    broken.append("\(output) delivered after \(last)")
                }
                delivered.append("\(output)")
            case .finish(let failure):
                delivered.append(failure == nil ? "end" : "end(failure)")
            }
        }
    }

    mutating func cancel(_ task: Task<Void, Never>?, _ broken: inout [String]) {
        guard let task else { return }
        guard let index = tasks.firstIndex(of: task) else { return broken.append("an unknown task was cancelled") }
        cancels[index + 1, default: 0] += 1
    }

    func checkEndings() -> [String] {
        var broken: [String] = []
        for teardown in [false, true] {
            var model = self
            var initiated = false
            for _ in 0..<30 {
                let events = model.enabledEvents
                let initiator: Event = teardown ? .teardown : .upstreamEnds(failing: false)
                var next: Event? = nil
                if !initiated, events.contains(initiator) {
                    initiated = true
                    next = initiator
                } else {
                    next = events.first { event in
                        switch event {
                        case .attach, .start: true
                        case .finish(_, let failing): !failing
                        default: false
                        }
                    }
                }
                guard let next else { break }
                broken += model.apply(next).map {
                    "\($0) (ending: \(teardown ? "teardown" : "upstream ends"), at \(next))"
                }
            }
            let ending = teardown ? "teardown" : "upstream ends"
            if !teardown && !model.terminated {
                if model.delivered.filter({ $0.hasPrefix("end") }).count != 1 {
                    broken.append(
                        "\(ending): the end was delivered \(model.delivered.filter { $0.hasPrefix("end") }.count) times"
                    )
                }
                if model.arrived > 0 && !model.delivered.contains("end(failure)")
                    && !model.delivered.contains("\(model.arrived)")
                {
                    broken.append("\(ending): the last element's result was never delivered (\(model.delivered))")
                }
            }
            for generation in model.attached
            where model.transforms[generation] != .done && model.cancels[generation] == nil {
                broken.append("\(ending): the transform of element \(generation) still runs, never cancelled")
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
            "\(machine)|\(upstream)|\(arrived)|\(transforms.sorted { $0.key < $1.key })|\(attached.sorted())|\(cancels.sorted { $0.key < $1.key })|\(terminated)\(delivered)"
    }
}
