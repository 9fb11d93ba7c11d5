// Exhaustive exploration of a state machine's events, for the package's own tests. Package
// access only: it is shared by the test targets of this package and is not part of the API.
//
// The machines of Bridges are values whose events return actions. A model wraps one machine with
// the bookkeeping its invariants need (which continuations it was handed and which it resumed,
// which elements were produced and what became of each), knows which events its callers can send
// in each state, and acts on the returned actions as the machine's storage would. The explorer
// applies every enabled event to every state, breadth first, deduplicates states by the model's
// key, and collects every invariant the model reports broken, with the path that broke it.

/// A state machine under exploration, with what its invariants need to know.
package protocol ExplorationModel {
    associatedtype Event: CustomStringConvertible
    associatedtype Key: Hashable

    /// The events the machine's callers can send in this state.
    var enabledEvents: [Event] { get }

    /// Applies `event`, acts on the actions the machine returns, and returns the invariants that
    /// broke (empty when none did).
    mutating func apply(_ event: Event) -> [String]

    /// Everything the rest of the exploration depends on: two models with equal keys must behave
    /// alike under every sequence of events.
    var key: Key { get }

    /// Drives copies of this state to each of its ends (the producer finishes, the consumer leaves,
    /// …) and returns what broke there: waiters never resumed, a teardown that never ran, elements
    /// unaccounted for. The default checks nothing.
    func checkEndings() -> [String]

    /// A copy that shares no mutable state with `self`. The default is `self`, right for a model
    /// whose machine is a plain value; a machine holding references (a ring buffer, a class of
    /// fields) is copied by replaying its events on a new machine.
    func fork() -> Self
}

extension ExplorationModel {
    package func checkEndings() -> [String] { [] }
    package func fork() -> Self { self }
}

/// What an exploration saw.
package struct ExplorationReport: Sendable, CustomStringConvertible {
    /// Distinct states (distinct keys) reached, the initial one included.
    package var distinctStates = 0
    /// Events applied.
    package var transitions = 0
    /// The deepest level that still found a new state.
    package var deepestLevel = 0
    /// Each broken invariant, with the events that led to it.
    package var violations: [String] = []

    package var description: String {
        "\(distinctStates) states, \(transitions) transitions, depth \(deepestLevel), \(violations.count) violations"
    }
}

/// Applies every enabled event, breadth first up to `depth` events from `initial`, to every state
/// not seen before; checks the invariants after each event and the endings of each new state.
/// Stops early once `maxViolations` were found.
package func exploreStateSpace<Model: ExplorationModel>(
    from initial: Model,
    depth: Int,
    maxViolations: Int = 5
) -> ExplorationReport {
    var report = ExplorationReport()
    var seen: Set<Model.Key> = [initial.key]
    report.distinctStates = 1
    func record(_ broken: [String], _ path: [String]) {
        let trace = path.isEmpty ? "the initial state" : path.joined(separator: " → ")
        for message in broken where report.violations.count < maxViolations {
            report.violations.append("\(message)\n    after: \(trace)")
        }
    }
    record(initial.checkEndings(), [])
    var frontier: [(model: Model, path: [String])] = [(initial, [])]
    var level = 0
    while level < depth, !frontier.isEmpty, report.violations.count < maxViolations {
        level += 1
        var next: [(model: Model, path: [String])] = []
        for (model, path) in frontier {
            for event in model.enabledEvents {
                var successor = model.fork()
                let broken = successor.apply(event)
                report.transitions += 1
                let successorPath = path + [event.description]
                if !broken.isEmpty {
                    record(broken, successorPath)
                    continue
                }
                guard seen.insert(successor.key).inserted else { continue }
                report.distinctStates += 1
                report.deepestLevel = level
                record(successor.checkEndings(), successorPath)
                next.append((successor, successorPath))
            }
            if report.violations.count >= maxViolations { break }
        }
        frontier = next
    }
    return report
}

/// Stand-ins for continuations in explored states: a state machine stores and hands back
/// `UnsafeContinuation`s without ever resuming them itself, so a model can give it values that
/// only carry an identifier, and read the identifier back from the actions. They must never be
/// resumed (there is no task behind them).
package enum ContinuationStandIn {
    /// A continuation value carrying `id` (> 0), never to be resumed.
    package static func make<T, E: Error>(
        _ id: Int, as _: UnsafeContinuation<T, E>.Type = UnsafeContinuation<T, E>.self
    ) -> UnsafeContinuation<T, E> {
        precondition(id > 0, "a stand-in's id must be positive")
        precondition(MemoryLayout<UnsafeContinuation<T, E>>.size == MemoryLayout<UnsafeRawPointer>.size)
        // A continuation is one pointer to its task's context; this one points nowhere and is
        // never dereferenced: only compared, stored and read back.
        let pointer = UnsafeRawPointer(bitPattern: UInt(id) << 4).unsafelyUnwrapped
        return unsafeBitCast(pointer, to: UnsafeContinuation<T, E>.self)
    }

    /// The identifier of a stand-in made by ``make(_:as:)``.
    package static func id<T, E: Error>(of continuation: UnsafeContinuation<T, E>) -> Int {
        Int(UInt(bitPattern: unsafeBitCast(continuation, to: UnsafeRawPointer.self)) >> 4)
    }
}

/// Counts the probes of an exploration that are alive (each probe counts itself in and out), so
/// that a test can check every one was released once the explored states are gone.
package final class LiveProbes: @unchecked Sendable {  // touched only by the thread running one exploration
    package var count = 0
    package init() {}
}
