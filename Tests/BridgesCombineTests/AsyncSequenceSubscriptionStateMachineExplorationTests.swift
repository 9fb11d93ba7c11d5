import BridgesTesting
import Testing

@testable import BridgesCombine

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine

/// Every interleaving of a `sequence.publisher()` subscription's events, up to a bounded depth:
/// demand requested (also invalid `.none`, and from inside `receive`), the publisher returning
/// from `receive(subscription:)`, the iterating task fetching an element, taking demand, waiting
/// for it (handing its continuation over, being woken), emitting, the sequence ending or failing,
/// and `cancel()`. After every event: never more emitted than requested, the waiting task
/// resumed at most once and never left waiting while demand is there or after a cancel, the
/// completion sent at most once and never after a cancel, the subscriber handed out (to complete
/// or to release) exactly once by the end. From every state: when the subscriber asks for
/// everything the sequence completes, and when it cancels the task ends.
@Suite("sequence.publisher(): state machine exploration", .timeLimit(.minutes(3)))
struct AsyncSequenceSubscriptionStateMachineExplorationTests {
    @Test func everyInterleaving_keepsTheInvariants() {
        let report = exploreStateSpace(from: SubscriptionModel(subscriber: SubscriberStandIn()), depth: 13)
        #expect(report.violations.isEmpty, "\(report.violations.joined(separator: "\n"))")
        #expect(report.distinctStates >= 500, "\(report)")
    }
}

/// The downstream, compared by identity only.
private final class SubscriberStandIn: Sendable {}

private struct SubscriptionModel: ExplorationModel {
    typealias Machine = AsyncSequenceSubscriptionStateMachine<SubscriberStandIn>

    enum Event: Hashable, CustomStringConvertible {
        case didSubscribe
        case request(Int)
        case cancel
        case fetch, fail, takeDemand, awaitDemand
        case emit(additional: Int)

        var description: String {
            switch self {
            case .didSubscribe: "didSubscribe"
            case .request(let n): n == 0 ? "request(.none)" : n == Int.max ? "request(.unlimited)" : "request(\(n))"
            case .cancel: "cancel"
            case .fetch: "fetch"
            case .fail: "fail"
            case .takeDemand: "takeDemand"
            case .awaitDemand: "awaitDemand"
            case .emit(let additional): "emit(+\(additional))"
            }
        }
    }

    /// The iterating task, one lock section at a time.
    enum TaskPC: Hashable { case notStarted, fetching, holding, mustAwait, suspended, emitting, done }

    static let elements = 2

    let subscriber: SubscriberStandIn
    var machine: Machine
    var subscribed = false
    var task = TaskPC.notStarted
    var fetched = 0
    var requested = 0  // Int.max: unlimited
    var requests = 0
    var emitted = 0
    var cancels = 0
    var completions = 0
    var handedOut = 0
    var waiterHandedIn = false

    init(subscriber: SubscriberStandIn) {
        self.subscriber = subscriber
        machine = Machine(subscriber: subscriber)
    }

    var enabledEvents: [Event] {
        var events: [Event] = []
        if !subscribed { events.append(.didSubscribe) }
        if requests < 3 { events += [.request(0), .request(1), .request(Int.max)] }
        if cancels < 2 { events.append(.cancel) }
        switch task {
        case .fetching: events += [.fetch, .fail]
        case .holding: events.append(.takeDemand)
        case .mustAwait: events.append(.awaitDemand)
        case .emitting: events += [.emit(additional: 0), .emit(additional: 1)]
        case .notStarted, .suspended, .done: break
        }
        return events
    }

    mutating func apply(_ event: Event) -> [String] {
        var broken: [String] = []
        switch event {
        case .didSubscribe:
            subscribed = true
            if case .startTask = machine.didSubscribe() {
                if cancels > 0 { broken.append("a cancelled subscription started its task") }
                task = .fetching
            } else if cancels == 0 {
                broken.append("the task did not start")
            }
        case .request(let n):
            requests += 1
            request(n, &broken)
        case .cancel:
            cancels += 1
            switch machine.cancel() {
            case .none:
                if cancels == 1 && completions == 0 { broken.append("the first cancel did nothing") }
            case .cancel(let waiter, let released):
                if released !== subscriber { broken.append("released another subscriber") }
                handedOut += 1
                if let waiter {
                    if task != .suspended { broken.append("cancel resumed a task that was not waiting") }
                    resume(waiter, proceed: false, &broken)
                }
            }
        case .fetch:
            if fetched < Self.elements {
                fetched += 1
                task = .holding
            } else {
                complete(&broken)
            }
        case .fail:
            complete(&broken)
        case .takeDemand:
            switch machine.takeDemand() {
            case .proceed: task = .emitting
            case .wait: task = .mustAwait
            case .stop: task = .done
            }
        case .awaitDemand:
            waiterHandedIn = true
            task = .suspended
            switch machine.awaitDemand(ContinuationStandIn.make(1)) {
            case .none: break
            case .resume(let waiter, let proceed): resume(waiter, proceed: proceed, &broken)
            }
        case .emit(let additional):
            guard let receiver = machine.subscriberForEmission() else {
                task = .done
                break
            }
            if receiver !== subscriber { broken.append("emitted to another subscriber") }
            if cancels > 0 { broken.append("an emission started after cancel()") }
            emitted += 1
            if emitted > requested { broken.append("emitted \(emitted), requested \(requested)") }
            machine.received(additional: additional == 0 ? .none : .max(additional))
            requested = requested == Int.max ? requested : requested + additional
            task = .fetching
        }
        if completions > 1 { broken.append("completed \(completions) times") }
        if handedOut > 1 { broken.append("the subscriber was handed out \(handedOut) times") }
        if task == .suspended && cancels > 0 { broken.append("the task still waits after cancel()") }
        if task == .suspended && requested > emitted {
            broken.append("the task waits though \(requested - emitted) are requested")
        }
        return broken
    }

    mutating func request(_ n: Int, _ broken: inout [String]) {
        let demand: Subscribers.Demand = n == 0 ? .none : n == Int.max ? .unlimited : .max(n)
        switch machine.request(demand) {
        case .none:
            if n == 0 { broken.append("request(.none) was not reported") }
        case .reportInvalidDemand:
            if n != 0 { broken.append("request(\(n)) was reported invalid") }
        case .resume(let waiter):
            if task != .suspended { broken.append("a request resumed a task that was not waiting") }
            resume(waiter, proceed: true, &broken)
        }
        if n > 0 && cancels == 0 && completions == 0 {
            requested = n == Int.max || requested == Int.max ? Int.max : requested + n
        }
    }

    mutating func resume(_ waiter: UnsafeContinuation<Bool, Never>, proceed: Bool, _ broken: inout [String]) {
        if ContinuationStandIn.id(of: waiter) != 1 || !waiterHandedIn {
            broken.append("resumed a waiter never handed in")
        }
        waiterHandedIn = false  // resumed: a second resume of it finds it no longer handed in
        if task != .suspended { broken.append("resumed a task that was \(task)") }
        task = proceed ? .emitting : .done
    }

    mutating func complete(_ broken: inout [String]) {
        task = .done
        if let receiver = machine.finish() {
            if receiver !== subscriber { broken.append("completed another subscriber") }
            if cancels > 0 { broken.append("completed after cancel()") }
            completions += 1
            handedOut += 1
        }
    }

    func checkEndings() -> [String] {
        var broken: [String] = []
        for cancelling in [false, true] {
            var model = self
            model.requests = 0  // the cap bounds the exploration, not the ending
            model.cancels = min(model.cancels, 1)
            var initiated = false
            for _ in 0..<30 {
                let events = model.enabledEvents
                let initiator: Event = cancelling ? .cancel : .request(Int.max)
                var next: Event? = nil
                if !initiated, model.subscribed || cancelling, events.contains(initiator) {
                    initiated = true
                    next = initiator
                } else {
                    next = [.didSubscribe, .fetch, .takeDemand, .awaitDemand, .emit(additional: 0)].first {
                        events.contains($0)
                    }
                }
                guard let next else { break }
                broken += model.apply(next).map {
                    "\($0) (ending: \(cancelling ? "cancel" : "unlimited demand"), at \(next))"
                }
            }
            let ending = cancelling ? "cancel" : "unlimited demand"
            if model.task != .done && !(model.task == .notStarted && model.cancels > 0) {
                broken.append("\(ending): the task never ends (\(model.task))")
            }
            if model.handedOut != 1 {
                broken.append("\(ending): the subscriber was handed out \(model.handedOut) times")
            }
            if !cancelling && model.cancels == 0 && model.completions != 1 {
                broken.append("\(ending): never completed")
            }
        }
        return broken
    }

    var key: String {
        "\(machine)|\(subscribed)\(task)\(fetched)|\(requested == Int.max ? "∞" : "\(requested - emitted)")|\(requests)\(cancels)\(completions)\(handedOut)\(waiterHandedIn)"
    }
}

#endif
