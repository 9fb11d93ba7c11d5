// The operators (`mapLatest`, `debounce`) decide what to emit on several tasks at once: the
// upstream loop, a transform or a timer. Each decides under its lock and posts the decision to an
// outbox in the same critical section; whoever finds nobody delivering becomes the deliverer and
// yields, outside the lock, everything posted, in order. So the downstream sees events in the order
// they were decided (never a stale result after a newer one), and no yield happens under a lock.

/// What an operator has decided to send downstream, in decision order.
@usableFromInline
struct Outbox<Element, Failure: Error> {
    @usableFromInline
    enum Event {
        case element(Element)
        case finish(Failure?)
    }

    private var events: [Event] = []
    private var head = 0
    /// Someone is delivering: a new post is picked up by that deliverer.
    private var isDelivering = false
    /// A finish was posted: later posts are discarded.
    private(set) var isClosed = false

    @usableFromInline init() {}

    /// Queues `event`. Returns `true` when the caller must deliver (call `take()` until it
    /// returns `nil`, outside the lock); `false` when another deliverer will pick it up, or when
    /// the outbox is already closed (then the event is discarded).
    @usableFromInline
    mutating func post(_ event: Event) -> Bool {
        guard !isClosed else { return false }
        if case .finish = event { isClosed = true }
        events.append(event)
        guard !isDelivering else { return false }
        isDelivering = true
        return true
    }

    /// The next event for the deliverer, or `nil` (and delivery stops) when none is left.
    @usableFromInline
    mutating func take() -> Event? {
        guard head < events.count else {
            events.removeAll(keepingCapacity: true)
            head = 0
            isDelivering = false
            return nil
        }
        defer { head += 1 }
        return events[head]
    }

    /// Drops the elements posted but not delivered yet (they became stale); a finish stays.
    @usableFromInline
    mutating func discardUndeliveredElements() {
        guard head < events.count else { return }
        let kept = events[head...].filter { if case .finish = $0 { true } else { false } }
        events.removeAll(keepingCapacity: true)
        head = 0
        events.append(contentsOf: kept)
    }
}

extension Outbox.Event: Sendable where Element: Sendable {}

/// Delivers what `take` hands out to `sink`, outside any lock, until nothing is left.
@usableFromInline
func _deliver<State, Element: Sendable, Failure>(
    _ state: LockedState<State>,
    to sink: CallbackStream<Element, Failure>.Sink,
    take: (inout State) -> Outbox<Element, Failure>.Event?
) {
    while let event = state.withLock(take) {
        switch event {
        case .element(let element):
            sink.yield(element)
        case .finish(nil):
            sink.finish()
        case .finish(let failure?):
            sink.finish(throwing: failure)
        }
    }
}
