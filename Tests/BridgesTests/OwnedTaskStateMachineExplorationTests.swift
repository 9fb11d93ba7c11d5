import BridgesTesting
import Dispatch
import Testing

@testable import Bridges

/// Every interleaving of the owned-task core's events, up to a bounded depth: the Task attached,
/// handler calls starting and ending on the task's thread, the final call or a finish without
/// one, and `cancel()` from two other threads and from inside a handler. After every event: the
/// first of cancel and finish wins and only one does, the Task is cancelled exactly once if a
/// cancel won and never otherwise, no handler call starts once a `cancel()` has returned, a
/// `cancel()` blocks only while a handler call runs on another thread and is woken exactly once
/// when it ends, and a cancel from inside the handler never blocks.
@Suite("Owned task: state machine exploration", .timeLimit(.minutes(3)))
struct OwnedTaskStateMachineExplorationTests {
    @Test func everyInterleaving_keepsTheInvariants() {
        let report = exploreStateSpace(from: OwnedTaskModel(task: Task {}), depth: 12)
        #expect(report.violations.isEmpty, "\(report.violations.joined(separator: "\n"))")
        #expect(report.distinctStates >= 70, "\(report)")
    }
}

private struct OwnedTaskModel: ExplorationModel {
    enum Event: Hashable, CustomStringConvertible {
        case attach, beginHandlerCall, beginFinish, endHandlerCall, finishWithoutCall, cancelFromHandler
        case cancel(UInt)

        var description: String {
            switch self {
            case .attach: "attach"
            case .beginHandlerCall: "beginHandlerCall"
            case .beginFinish: "beginFinish"
            case .endHandlerCall: "endHandlerCall"
            case .finishWithoutCall: "finishWithoutCall"
            case .cancelFromHandler: "cancelFromHandler"
            case .cancel(let thread): "cancel(thread \(thread))"
            }
        }
    }

    /// The thread the task's handler calls run on.
    static let taskThread: UInt = 1

    enum TaskPC: Hashable {
        case running
        case delivering(final: Bool)
        case done
    }
    enum CancellerPC: Hashable {
        case notYet
        case blocked(ObjectIdentifier)
        case returned
    }

    let task: Task<Void, Never>
    var machine = OwnedTaskStateMachine()
    var attached = false
    var taskPC = TaskPC.running
    var cancellers: [UInt: CancellerPC] = [2: .notYet, 3: .notYet]
    var handlerCancels = 0
    var wins: [String] = []
    var taskCancels = 0
    var signalled: [ObjectIdentifier: Int] = [:]

    init(task: Task<Void, Never>) { self.task = task }

    var enabledEvents: [Event] {
        var events: [Event] = []
        if !attached { events.append(.attach) }
        switch taskPC {
        case .running: events += [.beginHandlerCall, .beginFinish, .finishWithoutCall]
        case .delivering:
            events.append(.endHandlerCall)
            if handlerCancels == 0 { events.append(.cancelFromHandler) }
        case .done: break
        }
        for (thread, pc) in cancellers.sorted(by: { $0.key < $1.key }) where pc == .notYet {
            events.append(.cancel(thread))
        }
        return events
    }

    var anyCancelReturned: Bool { cancellers.values.contains(.returned) || handlerCancels > 0 }

    mutating func apply(_ event: Event) -> [String] {
        var broken: [String] = []
        switch event {
        case .attach:
            attached = true
            if case .cancelTask = machine.attach(task) {
                taskCancels += 1
                if !wins.contains("cancel") { broken.append("attach cancelled a task no cancel had won") }
            }
        case .beginHandlerCall, .beginFinish:
            let returnedBefore = anyCancelReturned
            let started =
                event == .beginHandlerCall
                ? machine.beginHandlerCall(on: Self.taskThread)
                : machine.beginFinish(on: Self.taskThread)
            if started {
                if returnedBefore { broken.append("a handler call started after cancel() had returned") }
                if event == .beginFinish { wins.append("finish") }
                taskPC = .delivering(final: event == .beginFinish)
            } else {
                if !wins.contains("cancel") && !wins.contains("finish") {
                    broken.append("a handler call was refused while active")
                }
                taskPC = .done
            }
        case .endHandlerCall:
            let final = taskPC == .delivering(final: true)
            for waiter in machine.endHandlerCall() { signal(waiter, &broken) }
            taskPC = final ? .done : .running
        case .finishWithoutCall:
            if machine.finish() { wins.append("finish") }
            taskPC = .done
        case .cancelFromHandler:
            handlerCancels += 1
            let action = machine.cancel(on: Self.taskThread)
            cancelled(action, &broken)
            if action.wait != nil { broken.append("a cancel() from inside the handler would wait for itself") }
        case .cancel(let thread):
            let action = machine.cancel(on: thread)
            cancelled(action, &broken)
            if let wait = action.wait {
                if case .delivering = taskPC {
                } else {
                    broken.append("cancel() waits with no handler call in progress")
                }
                cancellers[thread] = .blocked(ObjectIdentifier(wait))
            } else {
                if case .delivering = taskPC {
                    broken.append("cancel() returned while a handler call ran on another thread")
                }
                cancellers[thread] = .returned
            }
        }
        if wins.count > 1 { broken.append("both \(wins) won") }
        if machine.isActive != wins.isEmpty { broken.append("isActive \(machine.isActive) after \(wins)") }
        if taskCancels > 1 { broken.append("the task was cancelled \(taskCancels) times") }
        // No cancel() left blocked once no handler call runs.
        if case .delivering = taskPC {
        } else {
            for (thread, pc) in cancellers {
                if case .blocked = pc {
                    broken.append("cancel() on thread \(thread) is blocked with no handler call in progress")
                }
            }
        }
        return broken
    }

    mutating func cancelled(_ action: OwnedTaskStateMachine.CancelAction, _ broken: inout [String]) {
        if action.won {
            wins.append("cancel")
            if let cancelled = action.task {
                if cancelled != task || !attached { broken.append("cancel() handed out a task never attached") }
                taskCancels += 1
            } else if attached {
                broken.append("the winning cancel() did not cancel the attached task")
            }
        } else if action.task != nil {
            broken.append("a losing cancel() cancelled the task")
        }
    }

    mutating func signal(_ waiter: DispatchSemaphore, _ broken: inout [String]) {
        let id = ObjectIdentifier(waiter)
        signalled[id, default: 0] += 1
        if signalled[id]! > 1 { broken.append("a waiting cancel() was signalled twice") }
        guard let thread = cancellers.first(where: { $0.value == .blocked(id) })?.key else {
            broken.append("a semaphore nobody waits on was signalled")
            return
        }
        cancellers[thread] = .returned
    }

    func checkEndings() -> [String] {
        var model = self
        var broken: [String] = []
        for _ in 0..<10 {
            let events = model.enabledEvents
            guard
                let next = [Event.endHandlerCall, .attach, .cancel(2), .cancel(3), .finishWithoutCall].first(
                    where: events.contains)
            else { break }
            broken += model.apply(next).map { "\($0) (ending, at \(next))" }
        }
        if model.cancellers.values.contains(where: { if case .blocked = $0 { true } else { false } }) {
            broken.append("ending: a cancel() never returned")
        }
        if model.wins.count != 1 { broken.append("ending: winners \(model.wins)") }
        if model.wins == ["cancel"] && model.taskCancels != 1 {
            broken.append("ending: the task was cancelled \(model.taskCancels) times")
        }
        if model.wins == ["finish"] && model.taskCancels != 0 { broken.append("ending: a finished task was cancelled") }
        return broken
    }

    var key: String {
        let delivering = machine.handlerThread.map(String.init) ?? "-"
        let blocked = cancellers.sorted { $0.key < $1.key }.map { thread, pc -> String in
            switch pc {
            case .notYet: "n"
            case .returned: "r"
            case .blocked: "b"
            }
        }.joined()
        return
            "\(machine.phase)|\(delivering)|\(machine.waiters.count)|\(attached)\(taskPC)\(handlerCancels)\(blocked)|\(wins)\(taskCancels)"
    }
}
