/// The decisions of one iteration of `debounce(for:tolerance:clock:)`:
/// which element is pending, which timer may emit it, and when the stream ends. Pure state under
/// the operator's lock; the caller cancels timers and delivers after releasing it.
@usableFromInline
struct DebounceStateMachine<Element, Failure: Error> {
    /// Bumped for every upstream element; only the timer started for the current one may emit.
    private var generation = 0
    /// The newest element, not emitted yet.
    private var pending: Element?
    /// The timer of the current generation, once attached.
    private var timer: Task<Void, Never>?
    /// The consumer went away (teardown ran).
    private var terminated = false
    @usableFromInline var outbox = Outbox<Element, Failure>()

    @usableFromInline init() {}

    /// An upstream element arrived: it replaces the pending one. Returns its generation and the
    /// previous timer to cancel, or `nil` if the stream is over (the upstream loop stops).
    @usableFromInline
    mutating func elementArrived(_ element: Element) -> (generation: Int, previousTimer: Task<Void, Never>?)? {
        guard !terminated, !outbox.isClosed else { return nil }
        generation += 1
        pending = element
        defer { timer = nil }
        return (generation, timer)
    }

    /// The timer task for `generation` was created. Returns it if it must be cancelled at once.
    @usableFromInline
    mutating func attach(_ task: Task<Void, Never>, generation: Int) -> Task<Void, Never>? {
        if terminated || outbox.isClosed { return task }
        if generation == self.generation, pending != nil { timer = task }
        return nil
    }

    /// The timer for `generation` fired. Returns whether the caller must deliver.
    @usableFromInline
    mutating func timerFired(generation: Int) -> Bool {
        guard generation == self.generation, !terminated, let element = pending else { return false }
        pending = nil
        timer = nil
        return outbox.post(.element(element))
    }

    /// The upstream ended. Normally: the pending element (if any) is emitted now, then the end
    /// (as Combine and swift-async-algorithms do). With a failure: the pending element is dropped
    /// and the stream fails. Returns whether to deliver, and the timer to cancel.
    @usableFromInline
    mutating func upstreamEnded(_ failure: Failure?) -> (mustDeliver: Bool, cancel: Task<Void, Never>?) {
        guard !terminated else { return (false, nil) }
        var mustDeliver = false
        if failure == nil, let element = pending {
            mustDeliver = outbox.post(.element(element))
        }
        pending = nil
        mustDeliver = outbox.post(.finish(failure)) || mustDeliver
        defer { timer = nil }
        return (mustDeliver, timer)
    }

    /// The stream's teardown ran. Returns the timer to cancel.
    @usableFromInline
    mutating func terminate() -> Task<Void, Never>? {
        terminated = true
        pending = nil
        defer { timer = nil }
        return timer
    }
}
