@testable import Bridges
import BridgesTesting
import Testing

/// Every interleaving of `mapLatest`'s events, up to a bounded depth: upstream elements (each
/// superseding the transform before it), each transform task attached, starting and finishing
/// (with a result or a failure, cancelled or not), the upstream ending or failing, the teardown,
/// and the deliverer taking from the outbox. After every event: each transform task cancelled at
/// most once, only the current element's result delivered, results in order, nothing after the
/// end, the end delivered at most once, at most one deliverer, and whatever is posted has a
/// deliverer (no lost wake-up) with at most two events waiting (bounded delivery). From every
/// state: when the upstream ends, the last element's result and then the end are delivered; when
/// the consumer leaves, every transform still running is cancelled.
@Suite("mapLatest: state machine exploration", .timeLimit(.minutes(3)))
struct MapLatestStateMachineExplorationTests {
    @Test func everyInterleaving_keepsTheInvariants() {
        let tasks = (0..<3).map { _ in Task<Void, Never> {} }
        let report = exploreStateSpace(from: MapLatestModel(tasks: tasks), depth: 10)
        #expect(report.violations.isEmpty, "\(report.violations.joined(separator: "\n"))")
        #expect(report.distinctStates >= 1100, "\(report)")
    }
}

private struct Boom: Error, Hashable {}

private struct MapLatestModel: ExplorationModel {
    typealias Machine = MapLatestStateMachine<Int, Boom>

    enum Event: Hashable, CustomStringConvertible {
        case element, attach, start(Int), finish(Int, failing: Bool), upstreamEnds(failing: Bool), teardown, deliver

        var description: String {
            switch self {
            case .element: "element"
            case .attach: "attach"
            case .start(let generation): "start(\(generation))"
            case .finish(let generation, let failing): failing ? "fail(\(generation))" : "finish(\(generation))"
            case .upstreamEnds(let failing): failing ? "upstreamFails" : "upstreamEnds"
            case .teardown: "teardown"
            case .deliver: "deliver"
            }
        }
    }

    enum Upstream: Hashable { case running, attaching(Int), ended, stopped }
    enum Transform: Hashable { case created, running, done }

    let tasks: [Task<Void, Never>]
    var machine = Machine()
    var upstream = Upstream.running
    var arrived = 0
    var transforms: [Int: Transform] = [:]
    var attached: Set<Int> = []
    var cancels: [Int: Int] = [:]
    var terminated = false
    var deliverers = 0
    var delivered: [String] = []
    var failurePosted = false

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
        if deliverers > 0 { events.append(.deliver) }
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
            if machine.transformFinished(generation: generation, failing ? .failure(Boom()) : .success(generation)) {
                deliverers += 1
            }
            if failing && generation == arrived && !terminated { failurePosted = true }
        case .upstreamEnds(let failing):
            upstream = .ended
            let (mustDeliver, cancelled) = machine.upstreamEnded(failing ? Boom() : nil)
            cancel(cancelled, &broken)
            if mustDeliver { deliverers += 1 }
            if failing && !terminated { failurePosted = true }
        case .teardown:
            terminated = true
            cancel(machine.terminate(), &broken)
        case .deliver:
            switch machine.outbox.take() {
            case nil:
                deliverers -= 1
            case .element(let output)?:
                if delivered.last?.hasPrefix("end") == true { broken.append("\(output) delivered after the end") }
                if output != arrived { broken.append("the result of element \(output) delivered after element \(arrived) arrived") }
                if let last = delivered.last.flatMap(Int.init), output <= last { broken.append("\(output) delivered after \(last)") }
                delivered.append("\(output)")
            case .finish(let failure)?:
                if delivered.contains(where: { $0.hasPrefix("end") }) { broken.append("the end delivered twice") }
                delivered.append(failure == nil ? "end" : "end(failure)")
            }
        }
        if cancels.values.contains(where: { $0 > 1 }) { broken.append("a transform task was cancelled twice: \(cancels)") }
        if deliverers > 1 { broken.append("\(deliverers) deliverers at once") }
        if machine.outbox.believesSomeoneDelivers != (deliverers == 1) { broken.append("the outbox believes a deliverer runs: \(machine.outbox.believesSomeoneDelivers), deliverers \(deliverers)") }
        if machine.outbox.pendingCount > 0 && deliverers == 0 { broken.append("events posted and nobody delivers them") }
        if machine.outbox.pendingCount > 2 { broken.append("\(machine.outbox.pendingCount) events wait for one deliverer") }
        return broken
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
                        case .attach, .start, .deliver: true
                        case .finish(_, let failing): !failing
                        default: false
                        }
                    }
                }
                guard let next else { break }
                broken += model.apply(next).map { "\($0) (ending: \(teardown ? "teardown" : "upstream ends"), at \(next))" }
            }
            let ending = teardown ? "teardown" : "upstream ends"
            if !teardown && !model.terminated {
                if model.delivered.filter({ $0.hasPrefix("end") }).count != 1 { broken.append("\(ending): the end was delivered \(model.delivered.filter { $0.hasPrefix("end") }.count) times") }
                if model.arrived > 0 && !model.failurePosted && !model.delivered.contains("\(model.arrived)") {
                    broken.append("\(ending): the last element's result was never delivered (\(model.delivered))")
                }
            }
            for generation in model.attached where model.transforms[generation] != .done && model.cancels[generation] == nil {
                broken.append("\(ending): the transform of element \(generation) still runs, never cancelled")
            }
            if model.deliverers != 0 || model.machine.outbox.pendingCount != 0 { broken.append("\(ending): delivery never finished") }
        }
        return broken
    }

    var key: String {
        "\(machine)|\(upstream)|\(arrived)|\(transforms.sorted { $0.key < $1.key })|\(attached.sorted())|\(cancels.sorted { $0.key < $1.key })|\(terminated)\(deliverers)\(delivered)\(failurePosted)"
    }
}
