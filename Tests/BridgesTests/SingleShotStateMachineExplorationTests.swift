import BridgesTesting
import Testing

@testable import Bridges

/// Every interleaving of a `withCallback` bridge's events, up to a bounded depth: the legacy API
/// calling back (once, twice) or releasing its handler, the body returning (with the handler
/// kept or already gone) or throwing, the continuation handed over, the task cancelled, the
/// timeout started and firing. After every event: the task gets exactly one outcome and it is
/// the first ending's, the continuation is resumed at most once, the legacy call's token and the
/// timeout are handed out at most once (the token cancelled only for a cancel or a timeout), late
/// and second calls are routed as documented; from every state, each end (callback, cancel,
/// dropped handler) leaves the bridge spent.
@Suite("withCallback: state machine exploration", .timeLimit(.minutes(3)))
struct SingleShotStateMachineExplorationTests {
    @Test(arguments: [(false, false, 55), (true, false, 88), (false, true, 62), (true, true, 95)])
    func everyInterleaving_keepsTheInvariants(withTimeout: Bool, withToken: Bool, floor: Int) {
        let report = exploreStateSpace(from: SingleShotModel(withTimeout: withTimeout, withToken: withToken), depth: 10)
        #expect(report.violations.isEmpty, "\(report.violations.joined(separator: "\n"))")
        #expect(report.distinctStates >= floor, "\(report)")
    }
}

private struct Boom: Error, Hashable {}

private struct SingleShotModel: ExplorationModel {
    typealias Machine = SingleShotStateMachine<Int, Boom>

    enum Event: String, CustomStringConvertible {
        case callback, callbackFailing, bodyReturns, bodyReturnsHandlerGone, bodyThrows, handOver
        case cancel, handlerReleased, startTimeout, timeoutFires
        var description: String { rawValue }
    }

    /// Where the awaiting frame is.
    enum Frame: Hashable { case body, mustHandOver, suspended, done }

    let withTimeout: Bool
    let withToken: Bool
    /// Shared by copies: only compared by identity, never run here.
    let token = Cancellation()
    let timeout = OwnedTask()
    var machine = Machine()

    var frame = Frame.body
    var handlerAlive = true
    var callbacks = 0
    var cancels = 0
    var timeoutPending = false
    var timeoutStored = false
    var timeoutCancelled = false
    var timeoutFired = false
    var tokenStored = false
    var tokenCancelled = false
    var tokenRetired = false
    /// The first event that ended the bridge, and the outcome the task got.
    var ending: String?
    var outcome: String?

    init(withTimeout: Bool, withToken: Bool) {
        self.withTimeout = withTimeout
        self.withToken = withToken
    }

    var enabledEvents: [Event] {
        var events: [Event] = []
        if handlerAlive && callbacks < 2 { events += [.callback, .callbackFailing] }
        switch frame {
        case .body:
            events += [.bodyReturns, .bodyThrows]
            if handlerAlive { events.append(.bodyReturnsHandlerGone) }
        case .mustHandOver, .suspended:
            if cancels == 0 { events.append(.cancel) }
            if handlerAlive { events.append(.handlerReleased) }
        case .done:
            if handlerAlive { events.append(.handlerReleased) }
        }
        if frame == .mustHandOver { events.append(.handOver) }
        if timeoutPending { events.append(.startTimeout) }
        if timeoutStored && !timeoutCancelled && !timeoutFired { events.append(.timeoutFires) }
        return events
    }

    mutating func apply(_ event: Event) -> [String] {
        var broken: [String] = []
        switch event {
        case .callback, .callbackFailing:
            callbacks += 1
            let result: Result<Int, Boom> = event == .callback ? .success(callbacks) : .failure(Boom())
            if ending == nil { ending = "result" }
            switch machine.callback(result) {
            case .resume(let continuation, let resumed, let cancelTimeout, let retired):
                if callbacks != 1 { broken.append("a second call resumed the task") }
                check(ContinuationStandIn.id(of: continuation), &broken)
                give("\(resumed)", &broken)
                takeTimeout(cancelTimeout, &broken)
                retire(retired, &broken)
            case .stored(let retired):
                if frame == .suspended { broken.append("a result was stored for a suspended task") }
                retire(retired, &broken)
            case .handLate:
                if callbacks != 1 || ending == "result" {
                    broken.append("a first result that ended nothing was handed to onLateResult")
                }
            case .reportSecondCall(let report):
                if callbacks < 2 || !report {
                    broken.append("call \(callbacks) was reported as a second call: \(report)")
                }
            }
        case .bodyReturns, .bodyReturnsHandlerGone:
            let returned = withToken ? token : nil
            switch machine.bodyReturned(returned) {
            case .returnResult(let result):
                frame = .done
                give("\(result)", &broken)
            case .await:
                frame = .mustHandOver
                tokenStored = withToken
            }
            if event == .bodyReturnsHandlerGone {
                handlerAlive = false
                released(&broken)
            }
        case .bodyThrows:
            if ending == nil { ending = "bodyThrew" }
            frame = .done
            if let result = machine.bodyThrew() { give("\(result)", &broken) } else { give("bodyThrew", &broken) }
        case .handOver:
            switch machine.handOver(ContinuationStandIn.make(1)) {
            case .suspend:
                frame = .suspended
                timeoutPending = withTimeout
            case .resume(let continuation, let outcome):
                check(ContinuationStandIn.id(of: continuation), &broken)
                frame = .done
                switch outcome {
                case .result(let result): give("\(result)", &broken)
                case .ended(let ended): give("\(ended)", &broken)
                }
            }
        case .cancel:
            cancels += 1
            if ending == nil { ending = "cancelled" }
            interrupt(machine.interrupt(timedOut: false), timedOut: false, &broken)
        case .timeoutFires:
            timeoutFired = true
            if ending == nil { ending = "timedOut" }
            interrupt(machine.interrupt(timedOut: true), timedOut: true, &broken)
        case .handlerReleased:
            handlerAlive = false
            released(&broken)
        case .startTimeout:
            timeoutPending = false
            timeoutStored = machine.setTimeout(timeout)
            if timeoutStored != (outcome == nil) {
                broken.append("the timeout was stored: \(timeoutStored), with the task's outcome \(outcome ?? "none")")
            }
        }
        checkInvariants(&broken)
        return broken
    }

    mutating func released(_ broken: inout [String]) {
        if ending == nil && callbacks == 0 { ending = "dropped" }
        switch machine.callbackReleased() {
        case .none:
            break
        case .dropped(let continuation, let cancelTimeout, let retired):
            if callbacks != 0 { broken.append("a handler released after its call was reported dropped") }
            if let continuation {
                check(ContinuationStandIn.id(of: continuation), &broken)
                give("dropped", &broken)
            }
            takeTimeout(cancelTimeout, &broken)
            retire(retired, &broken)
        }
    }

    mutating func interrupt(_ action: Machine.InterruptAction, timedOut: Bool, _ broken: inout [String]) {
        switch action {
        case .none:
            break
        case .end(let continuation, let legacy, let cancelTimeout):
            if let legacy {
                if legacy !== token || tokenCancelled || tokenRetired {
                    broken.append("the legacy call's token was handed out twice")
                }
                tokenCancelled = true
            }
            if timedOut && cancelTimeout != nil { broken.append("the firing timeout was cancelled") }
            takeTimeout(cancelTimeout, &broken)
            if let continuation {
                check(ContinuationStandIn.id(of: continuation), &broken)
                give(timedOut ? "timedOut" : "cancelled", &broken)
            }
        }
    }

    var continuationResumes = 0

    mutating func check(_ id: Int, _ broken: inout [String]) {
        continuationResumes += 1
        if id != 1 || frame != .suspended && frame != .mustHandOver {
            broken.append("continuation \(id) resumed while the frame was \(frame)")
        }
        if continuationResumes > 1 { broken.append("the continuation was resumed \(continuationResumes) times") }
    }

    mutating func give(_ given: String, _ broken: inout [String]) {
        if let outcome { broken.append("a second outcome \(given) after \(outcome)") }
        outcome = given
        frame = .done
        let expected: String
        switch ending {
        case "result": expected = given.hasPrefix("success") || given.hasPrefix("failure") ? given : "a result"
        case "bodyThrew": expected = "bodyThrew"
        case "cancelled": expected = "cancelled"
        case "timedOut": expected = "timedOut"
        case "dropped": expected = "dropped"
        default: expected = "no ending yet"
        }
        if given != expected { broken.append("the task got \(given), the bridge ended as \(ending ?? "nothing")") }
    }

    mutating func retire(_ retired: Cancellation?, _ broken: inout [String]) {
        guard let retired else { return }
        if retired !== token || tokenCancelled || tokenRetired {
            broken.append("the legacy call's token was handed out twice")
        }
        tokenRetired = true
    }

    mutating func takeTimeout(_ owned: OwnedTask?, _ broken: inout [String]) {
        guard let owned else { return }
        if owned !== timeout || timeoutCancelled { broken.append("the timeout was cancelled twice") }
        timeoutCancelled = true
    }

    func checkInvariants(_ broken: inout [String]) {
        if outcome != nil && !machine.isSpent {
            broken.append("the task has its outcome and the state still holds a token or a timeout")
        }
        if tokenCancelled && ending != "cancelled" && ending != "timedOut" {
            broken.append("the legacy call was cancelled though it ended as \(ending ?? "-")")
        }
        if frame == .suspended && outcome == nil {
            guard case .awaiting = machine.phase else {
                broken.append("the task is suspended and the state holds no continuation (\(machine.phase))")
                return
            }
        }
    }

    func checkEndings() -> [String] {
        var broken: [String] = []
        for ending in [Event.callback, .cancel, .handlerReleased] {
            var model = self
            var initiated = false
            for _ in 0..<12 {
                let events = model.enabledEvents
                let next: Event?
                if !initiated, events.contains(ending), model.frame != .body {
                    initiated = true
                    next = ending
                } else {
                    next = [Event.bodyReturns, .handOver, .startTimeout, .handlerReleased].first {
                        events.contains($0) && ($0 != .handlerReleased || initiated)
                    }
                }
                guard let next else { break }
                broken += model.apply(next).map { "\($0) (ending by \(ending), at \(next))" }
            }
            if model.outcome == nil { broken.append("ending by \(ending): the task never got an outcome") }
            if !model.machine.isSpent { broken.append("ending by \(ending): the bridge is not spent") }
            if model.tokenStored && !model.tokenCancelled && !model.tokenRetired {
                broken.append("ending by \(ending): the token was never handed back")
            }
            if model.timeoutStored && !model.timeoutCancelled && !model.timeoutFired {
                broken.append("ending by \(ending): the timeout still runs")
            }
        }
        return broken
    }

    var key: String {
        "\(machine.phase)|\(machine.token != nil)\(machine.timeout != nil)\(machine.callbackCalls)|\(frame)\(handlerAlive)\(callbacks)\(cancels)"
            + "|\(timeoutPending)\(timeoutStored)\(timeoutCancelled)\(timeoutFired)|\(tokenStored)\(tokenCancelled)\(tokenRetired)|\(ending ?? "-")|\(outcome ?? "-")"
    }
}
