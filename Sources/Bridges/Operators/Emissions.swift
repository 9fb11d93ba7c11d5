// What an operator's state machine decides to emit downstream, moved into the stream through
// the stream engine's `Outbox` in the operator's critical section.

/// What an operator's state machine decided to emit downstream, in decision order: posted under
/// the operator's lock and, in the same critical section, decided into the stream with
/// ``decide(into:)``.
@usableFromInline
struct Emissions<Element, Failure: Error> {
    @usableFromInline
    enum Event {
        case element(Element)
        case finish(Failure?)
    }

    @usableFromInline var events = StreamRing<Event>()
    /// A finish was posted: later posts are discarded.
    @usableFromInline private(set) var isClosed = false

    @usableFromInline init() {}

    /// Queues `event` for this critical section. Returns `false` when a finish was posted before
    /// (the event is discarded).
    @usableFromInline
    @discardableResult
    mutating func post(_ event: Event) -> Bool {
        guard !isClosed else { return false }
        if case .finish = event { isClosed = true }
        events.append(event, initialCapacity: 2, maximumCapacity: .max)
        return true
    }

    /// Moves every posted event into `sink`'s stream (call under the operator's lock), adding to
    /// `outbox` what to perform after it is released.
    @usableFromInline
    mutating func decide(into sink: CallbackStream<Element, Failure>.Sink, _ outbox: inout Outbox<Element, Failure>) {
        while let event = events.popFirst() {
            switch event {
            case .element(let element): outbox.decideYield(element, to: sink)
            case .finish(let failure): outbox.decideFinish(failure, to: sink)
            }
        }
    }
}
