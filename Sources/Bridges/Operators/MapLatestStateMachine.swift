/// The decisions of one iteration of `_mapLatest`: which transform is current, whether its
/// result may still be emitted, and when the stream ends. Pure state under the operator's lock;
/// what it emits is decided into the stream in the same critical section; the caller cancels tasks
/// and acts on the stream's decisions after releasing the lock.
@usableFromInline
struct MapLatestStateMachine<Output, Failure: Error> {
    /// Bumped for every upstream element; a transform may emit only while its generation is current.
    private var generation = 0
    /// Whether the transform of `generation` is still running.
    private var transformRunning = false
    /// The task running the current transform, once attached; cancelled when superseded or torn down.
    private var current: Task<Void, Never>?
    private var upstreamFinished = false
    /// The consumer went away (teardown ran): nothing more is started or emitted.
    private var terminated = false
    /// What the current event decided to emit; moved into the stream before the lock is released.
    @usableFromInline var emissions = Emissions<Output, Failure>()

    @usableFromInline init() {}

    /// An upstream element arrived. Returns its generation and the superseded transform's task to
    /// cancel, or `nil` if the stream is over (the upstream loop stops).
    @usableFromInline
    mutating func elementArrived() -> (generation: Int, superseded: Task<Void, Never>?)? {
        guard !terminated, !emissions.isClosed else { return nil }
        generation += 1
        transformRunning = true
        let superseded = current
        current = nil
        return (generation, superseded)
    }

    /// The transform task for `generation` was created. Returns it if it must be cancelled at
    /// once (the stream ended meanwhile).
    @usableFromInline
    mutating func attach(_ task: Task<Void, Never>, generation: Int) -> Task<Void, Never>? {
        if terminated || emissions.isClosed { return task }
        if generation == self.generation, transformRunning { current = task }
        return nil
    }

    /// The task for `generation` is about to call the transform: whether it still should. Not
    /// when a newer element superseded it or the stream ended before the task got to run (the
    /// task would only be cancelled once the transform had started).
    @usableFromInline
    func mayStart(generation: Int) -> Bool {
        !terminated && !emissions.isClosed && generation == self.generation && transformRunning
    }

    /// The transform for `generation` returned. Returns whether it posted something to emit.
    @usableFromInline
    mutating func transformFinished(generation: Int, _ result: Result<Output, Failure>) -> Bool {
        guard generation == self.generation, transformRunning, !terminated else { return false }  // superseded
        transformRunning = false
        current = nil
        switch result {
        case .success(let output):
            let mustDeliver = emissions.post(.element(output))
            guard upstreamFinished else { return mustDeliver }
            return emissions.post(.finish(nil)) || mustDeliver
        case .failure(let failure):
            return emissions.post(.finish(failure))
        }
    }

    /// The upstream ended, normally (`nil`) or with `failure`. The stream finishes once the
    /// current transform has emitted; a failure ends it now and cancels the transform.
    @usableFromInline
    mutating func upstreamEnded(_ failure: Failure?) -> (mustDeliver: Bool, cancel: Task<Void, Never>?) {
        guard !terminated else { return (false, nil) }
        upstreamFinished = true
        if let failure {
            transformRunning = false
            defer { current = nil }
            return (emissions.post(.finish(failure)), current)
        }
        return (transformRunning ? false : emissions.post(.finish(nil)), nil)
    }

    /// The stream's teardown ran. Returns the transform to cancel.
    @usableFromInline
    mutating func terminate() -> Task<Void, Never>? {
        terminated = true
        transformRunning = false
        defer { current = nil }
        return current
    }
}
