import Dispatch
import Testing

@testable import Bridges

/// A logical clock: every event takes the next tick, under one lock, so stamps order events
/// across threads exactly.
final class OrderClock: Sendable {
    private let ticks = LockedState<Int>(0)
    init() {}
    func stamp() -> Int {
        ticks.withLock {
            $0 += 1
            return $0
        }
    }
}

/// Stamps per iteration: handler starts, what each start was, and when `cancel()` returned.
final class OrderLog<Event: Sendable>: Sendable {
    private struct Entry {
        var starts: [(tick: Int, event: Event)] = []
        var cancelReturned: Int?
    }
    private let clock = OrderClock()
    private let entries: LockedState<[Entry]>

    init(iterations: Int) { entries = LockedState(Array(repeating: Entry(), count: iterations)) }

    /// Call FIRST thing in the handler.
    func handlerStarted(_ index: Int, _ event: Event) {
        entries.withLock { $0[index].starts.append((clock.stamp(), event)) }
    }

    /// Call right after `cancel()` returned.
    func cancelReturned(_ index: Int) {
        entries.withLock { $0[index].cancelReturned = clock.stamp() }
    }

    /// The handler starts (with their events) that came after `cancel()` had returned.
    func startsAfterCancel(allowing allowed: (Event) -> Bool = { _ in false }) -> [(index: Int, event: Event)] {
        entries.withLock { entries in
            entries.indices.flatMap { index -> [(index: Int, event: Event)] in
                guard let cancelled = entries[index].cancelReturned else { return [] }
                return entries[index].starts
                    .filter { $0.tick > cancelled && !allowed($0.event) }
                    .map { (index, $0.event) }
            }
        }
    }

    var everyCancelReturned: Bool { entries.withLock { $0.allSatisfy { $0.cancelReturned != nil } } }
    func starts(_ index: Int) -> [Event] { entries.withLock { $0[index].starts.map(\.event) } }
}
