/// The decisions of one iteration of `debounce(for:tolerance:clock:)`: which element is pending,
/// until when, and whether the timer task runs. Pure state under the operator's lock; what it emits
/// is decided into the stream in the same critical section; the caller starts or cancels the
/// timer and acts on the stream's decisions after releasing the lock.
///
/// One timer task per burst, not per element: an element arriving while the timer sleeps only
/// moves the deadline; the timer, on waking, sleeps again until the new deadline, or emits.
@usableFromInline
struct DebounceStateMachine<Element, Failure: Error, Instant: Comparable> {
    @usableFromInline
    enum Phase {
        /// Nothing pending and no timer. Entered at start and when the timer emitted.
        case idle
        /// The newest element waits for `deadline`; a timer task runs towards it (`timer` once
        /// attached). Entered by an upstream element; a newer one only replaces element and
        /// deadline.
        case pending(element: Element, deadline: Instant, timer: Task<Void, Never>?)
        /// Nothing more is emitted: the upstream ended, or the consumer went away (teardown ran).
        case ended
    }

    private var phase = Phase.idle
    /// What the current event decided to emit; moved into the stream before the lock is released.
    @usableFromInline var emissions = Emissions<Element, Failure>()

    @usableFromInline init() {}

    @usableFromInline
    enum ArrivalAction {
        /// The stream is over: the upstream loop stops.
        case stop
        /// The running timer will see the new deadline.
        case none
        /// Start a timer task sleeping until the deadline.
        case startTimer
    }

    /// An upstream element arrived, to be emitted at `deadline` unless a newer one comes first.
    @usableFromInline
    mutating func elementArrived(_ element: Element, deadline: Instant) -> ArrivalAction {
        guard !emissions.isClosed else { return .stop }
        switch phase {
        case .ended:
            return .stop
        case .idle:
            phase = .pending(element: element, deadline: deadline, timer: nil)
            return .startTimer
        case .pending(_, _, let timer):
            phase = .pending(element: element, deadline: deadline, timer: timer)
            return .none
        }
    }

    /// The timer task was created. Returns it if it must be cancelled at once.
    @usableFromInline
    mutating func attach(_ task: Task<Void, Never>) -> Task<Void, Never>? {
        if emissions.isClosed { return task }
        switch phase {
        case .ended: return task
        case .pending(let element, let deadline, _): phase = .pending(element: element, deadline: deadline, timer: task)
        case .idle: break  // the timer already emitted and ends by itself
        }
        return nil
    }

    @usableFromInline
    enum TimerAction {
        /// Sleep until this deadline (at start, or again: a newer element moved it).
        case sleep(until: Instant)
        /// The pending element was posted (if `mustEmit`), then the timer ends.
        case fired(mustEmit: Bool)
        /// Nothing to do any more: the timer ends.
        case stop
    }

    /// The timer asks what to do, before its first sleep (`sleptUntil == nil`) and after each.
    @usableFromInline
    mutating func timerTick(sleptUntil: Instant?) -> TimerAction {
        guard case .pending(let element, let deadline, _) = phase else { return .stop }
        if let sleptUntil, !(sleptUntil < deadline) {
            phase = .idle
            return .fired(mustEmit: emissions.post(.element(element)))
        }
        return .sleep(until: deadline)
    }

    /// The upstream ended. Normally: the pending element (if any) is emitted now, then the end
    /// (as Combine and swift-async-algorithms do). With a failure: the pending element is dropped
    /// and the stream fails. Returns whether to emit, and the timer to cancel.
    @usableFromInline
    mutating func upstreamEnded(_ failure: Failure?) -> (mustEmit: Bool, cancel: Task<Void, Never>?) {
        switch phase {
        case .ended:
            return (false, nil)
        case .idle:
            phase = .ended
            return (emissions.post(.finish(failure)), nil)
        case .pending(let element, _, let timer):
            phase = .ended
            let emitsElement = failure == nil && emissions.post(.element(element))
            return (emissions.post(.finish(failure)) || emitsElement, timer)
        }
    }

    /// The stream's teardown ran. Returns the timer to cancel.
    @usableFromInline
    mutating func terminate() -> Task<Void, Never>? {
        defer { phase = .ended }
        guard case .pending(_, _, let timer) = phase else { return nil }
        return timer
    }
}
