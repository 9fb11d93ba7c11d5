/// The decisions of one iteration of `debounce(for:tolerance:clock:)`: which element is pending,
/// until when, and whether the timer task runs. Pure state under the operator's lock; what it emits
/// is decided into the stream in the same critical section; the caller starts or cancels the
/// timer and acts on the stream's decisions after releasing the lock.
///
/// One timer task per burst, not per element: an element arriving while the timer sleeps only
/// moves the deadline; the timer, on waking, sleeps again until the new deadline, or emits.
@usableFromInline
struct DebounceStateMachine<Element, Failure: Error, Instant: Comparable> {
    /// The newest element, not emitted yet, and when it may be.
    private var pending: (element: Element, deadline: Instant)?
    /// Whether a timer task is running (sleeping towards `pending`'s deadline, or about to).
    private var timerRunning = false
    /// The running timer's task, once attached: cancelled at the end.
    private var timer: Task<Void, Never>?
    /// The consumer went away (teardown ran).
    private var terminated = false
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
        guard !terminated, !emissions.isClosed else { return .stop }
        pending = (element, deadline)
        if timerRunning { return .none }
        timerRunning = true
        return .startTimer
    }

    /// The timer task was created. Returns it if it must be cancelled at once.
    @usableFromInline
    mutating func attach(_ task: Task<Void, Never>) -> Task<Void, Never>? {
        if terminated || emissions.isClosed { return task }
        if timerRunning { timer = task }
        return nil
    }

    @usableFromInline
    enum TimerAction {
        /// Sleep until this deadline (at start, or again: a newer element moved it).
        case sleep(until: Instant)
        /// The pending element was posted (if `mustDeliver`), then the timer ends.
        case fired(mustDeliver: Bool)
        /// Nothing to do any more: the timer ends.
        case stop
    }

    /// The timer asks what to do, before its first sleep (`sleptUntil == nil`) and after each.
    @usableFromInline
    mutating func timerTick(sleptUntil: Instant?) -> TimerAction {
        guard !terminated, timerRunning, let (element, deadline) = pending else {
            timerRunning = false
            timer = nil
            return .stop
        }
        if let sleptUntil, !(sleptUntil < deadline) {
            pending = nil
            timerRunning = false
            timer = nil
            return .fired(mustDeliver: emissions.post(.element(element)))
        }
        return .sleep(until: deadline)
    }

    /// The upstream ended. Normally: the pending element (if any) is emitted now, then the end
    /// (as Combine and swift-async-algorithms do). With a failure: the pending element is dropped
    /// and the stream fails. Returns whether to deliver, and the timer to cancel.
    @usableFromInline
    mutating func upstreamEnded(_ failure: Failure?) -> (mustDeliver: Bool, cancel: Task<Void, Never>?) {
        guard !terminated else { return (false, nil) }
        var mustDeliver = false
        if failure == nil, let (element, _) = pending {
            mustDeliver = emissions.post(.element(element))
        }
        pending = nil
        timerRunning = false
        mustDeliver = emissions.post(.finish(failure)) || mustDeliver
        defer { timer = nil }
        return (mustDeliver, timer)
    }

    /// The stream's teardown ran. Returns the timer to cancel.
    @usableFromInline
    mutating func terminate() -> Task<Void, Never>? {
        terminated = true
        pending = nil
        timerRunning = false
        defer { timer = nil }
        return timer
    }
}
