/// The decisions of one iteration of `_mapLatest`: which transform is current, whether its
/// result may still be emitted, and when the stream ends. Pure state under the operator's lock;
/// what it emits is decided into the stream in the same critical section; the caller cancels tasks
/// and acts on the stream's decisions after releasing the lock.
@usableFromInline
struct MapLatestStateMachine<Output, Failure: Error> {
    @usableFromInline
    enum Phase {
        /// The upstream runs and no transform does. Entered at start and when a transform emitted
        /// while the upstream still runs.
        case idle
        /// The transform of `generation` runs (`task` once attached). Entered by an upstream
        /// element; left when it returns, is superseded by the next element (its task cancelled),
        /// or the stream ends.
        case transforming(task: Task<Void, Never>?)
        /// The upstream finished while the transform of `generation` ran: the stream finishes
        /// once that transform has emitted.
        case draining(task: Task<Void, Never>?)
        /// Nothing more is started or emitted: the upstream finished with no transform running,
        /// either side failed, or the consumer went away (teardown ran).
        case ended
    }

    private var phase = Phase.idle
    /// Bumped for every upstream element; a transform may emit only while its generation is current.
    private var generation = 0
    /// What the current event decided to emit; moved into the stream before the lock is released.
    @usableFromInline var emissions = Emissions<Output, Failure>()

    @usableFromInline init() {}

    /// An upstream element arrived. Returns its generation and the superseded transform's task to
    /// cancel, or `nil` if the stream is over (the upstream loop stops).
    @usableFromInline
    mutating func elementArrived() -> (generation: Int, superseded: Task<Void, Never>?)? {
        guard !emissions.isClosed else { return nil }
        let superseded: Task<Void, Never>?
        switch phase {
        case .idle: superseded = nil
        case .transforming(let task): superseded = task
        case .draining, .ended: return nil
        }
        generation += 1
        phase = .transforming(task: nil)
        return (generation, superseded)
    }

    /// The transform task for `generation` was created. Returns it if it must be cancelled at
    /// once (the stream ended meanwhile).
    @usableFromInline
    mutating func attach(_ task: Task<Void, Never>, generation: Int) -> Task<Void, Never>? {
        if emissions.isClosed { return task }
        switch phase {
        case .ended: return task
        case .transforming where generation == self.generation: phase = .transforming(task: task)
        case .draining where generation == self.generation: phase = .draining(task: task)
        case .idle, .transforming, .draining: break  // superseded: `mayStart` stops it
        }
        return nil
    }

    /// The task for `generation` is about to call the transform: whether it still should. Not
    /// when a newer element superseded it or the stream ended before the task got to run (the
    /// task would only be cancelled once the transform had started).
    @usableFromInline
    func mayStart(generation: Int) -> Bool {
        guard !emissions.isClosed, generation == self.generation else { return false }
        switch phase {
        case .transforming, .draining: return true
        case .idle, .ended: return false
        }
    }

    /// The transform for `generation` returned. Returns whether it posted something to emit.
    @usableFromInline
    mutating func transformFinished(generation: Int, _ result: Result<Output, Failure>) -> Bool {
        guard generation == self.generation else { return false }  // superseded
        let upstreamFinished: Bool
        switch phase {
        case .transforming: upstreamFinished = false
        case .draining: upstreamFinished = true
        case .idle, .ended: return false
        }
        switch result {
        case .success(let output):
            phase = upstreamFinished ? .ended : .idle
            let mustEmit = emissions.post(.element(output))
            guard upstreamFinished else { return mustEmit }
            return emissions.post(.finish(nil)) || mustEmit
        case .failure(let failure):
            phase = .ended
            return emissions.post(.finish(failure))
        }
    }

    /// The upstream ended, normally (`nil`) or with `failure`. The stream finishes once the
    /// current transform has emitted; a failure ends it now and cancels the transform.
    @usableFromInline
    mutating func upstreamEnded(_ failure: Failure?) -> (mustEmit: Bool, cancel: Task<Void, Never>?) {
        switch phase {
        case .ended:
            return (false, nil)
        case .idle:
            phase = .ended
            return (emissions.post(.finish(failure)), nil)
        case .transforming(let task), .draining(let task):
            guard let failure else {
                phase = .draining(task: task)
                return (false, nil)
            }
            phase = .ended
            return (emissions.post(.finish(failure)), task)
        }
    }

    /// The stream's teardown ran. Returns the transform to cancel.
    @usableFromInline
    mutating func terminate() -> Task<Void, Never>? {
        defer { phase = .ended }
        switch phase {
        case .transforming(let task), .draining(let task): return task
        case .idle, .ended: return nil
        }
    }
}
