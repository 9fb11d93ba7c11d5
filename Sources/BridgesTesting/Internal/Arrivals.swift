/// Things that arrive over time (invocations, subscriptions), handed to the test in order:
/// `next()` returns the first one not yet handed out, waiting (bounded) until it arrives.
final class Arrivals<Item: Sendable>: Sendable {
    private struct State {
        var items: [Item] = []
        var cursor = 0
        var arrival = Gate()
    }

    private let state = LockedState(State())

    var all: [Item] { state.withLock { $0.items } }

    /// Appends the item `make` builds from its position (from 0), so that positions follow
    /// the order of arrival even when items arrive from several threads at once. `make` runs
    /// under the lock: it must only build the item.
    func append(_ make: (Int) -> Item) -> Item {
        let (item, gate) = state.withLock { state -> (Item, Gate) in
            let item = make(state.items.count)
            state.items.append(item)
            defer { state.arrival = Gate() }
            return (item, state.arrival)
        }
        gate.open()
        return item
    }

    /// The next item not yet handed out, or nil if none arrived within `timeout` of real time.
    @available(BridgesClock, *)
    func next(timeout: Duration) async -> Item? {
        while true {
            let (item, gate) = state.withLock { state -> (Item?, Gate) in
                guard state.cursor < state.items.count else { return (nil, state.arrival) }
                defer { state.cursor += 1 }
                return (state.items[state.cursor], state.arrival)
            }
            if let item { return item }
            if await !gate.wait(atMost: timeout) || Task.isCancelled { return nil }
        }
    }
}
