import Dispatch

/// Stream teardowns, and every `Cancellation` action, enqueued on the actor they were written on,
/// until that actor runs them.
///
/// A stream's teardown written on an actor (a `@MainActor` view model's builder) runs only there.
/// When the stream ends on a thread that is not that actor (the producer finished on its queue,
/// the consumer's task was cancelled from elsewhere, the consumer iterates on another actor), the
/// stream enqueues the teardown on its actor as a job. Before a stream builder runs on an actor,
/// that actor first runs every stream teardown still waiting for it: a source started again there
/// (a screen that re-appears, a retry) is stopped by its old teardown before the new builder starts
/// it, whatever order the actor happens to run its jobs in. (A consumer iterating on the
/// teardown's actor does not wait for the job either: it runs the teardown itself when its loop
/// ends; see `CallbackStreamStateMachine.takeTeardown`.)
///
/// Each teardown runs once whoever gets to it first (the stream moves it out of its state when
/// taken); an entry here only says which stream to ask.
@usableFromInline
enum ActorTeardowns {
    /// One stream's enqueued teardown: asks that stream to run it, if nobody has.
    struct Entry {
        let id: UInt64
        let run: @Sendable () -> Void
    }

    struct Pending {
        var byActor: [ObjectIdentifier: [Entry]] = [:]
        var nextID: UInt64 = 0
    }

    static let pending = LockedState(Pending())

    /// Enqueues `run` on `actor`: a job there calls it, unless a builder on that actor ran it first.
    static func enqueue(on actor: any Actor, _ run: @escaping @Sendable () -> Void) {
        let key = ObjectIdentifier(actor)
        let id = pending.withLock { pending in
            pending.nextID &+= 1
            pending.byActor[key, default: []].append(Entry(id: pending.nextID, run: run))
            return pending.nextID
        }
        Cancellation.enqueue(UnsafeAction { take(id, key)?() }, on: actor)
    }

    /// Runs, here, every teardown enqueued on `actor` and not run yet. Call it on `actor` only.
    @usableFromInline
    static func runAll(on actor: any Actor) {
        let key = ObjectIdentifier(actor)
        guard let entries = pending.withLock({ $0.byActor.removeValue(forKey: key) }) else { return }
        QueuedTeardowns.$running.withValue(true) {
            for entry in entries { entry.run() }
        }
    }

    private static func take(_ id: UInt64, _ key: ObjectIdentifier) -> (@Sendable () -> Void)? {
        pending.withLock { pending in
            guard var entries = pending.byActor[key], let index = entries.firstIndex(where: { $0.id == id }) else {
                return nil
            }
            let entry = entries.remove(at: index)
            pending.byActor[key] = entries.isEmpty ? nil : entries
            return entry.run
        }
    }
}

/// Whether the current code runs teardowns that streams enqueued on its actor, before a builder
/// there (`ActorTeardowns.runAll`): they may be any stream's, another test's included, so
/// BridgesTesting's scheduler does not take what they resume for the work of the test whose
/// builder runs them.
package enum QueuedTeardowns {
    @TaskLocal package static var running = false
}

/// Whether code runs on the main queue, where the main actor's jobs run: the one actor whose
/// isolation Bridges can check at run time with public API. (`Thread.isMainThread` would be
/// wrong under `swift test` on Linux, whose main actor is not on the main thread; main-actor code
/// on Apple's main thread outside a main-queue job, a run loop source, answers false: Bridges
/// then takes the careful path.)
package enum MainQueue {
    static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }

    /// Makes code on `queue` count as on the main queue: BridgesTesting's scope of a
    /// `@MainActor` test runs its jobs on a queue of its own, each inside a main-queue job.
    package static func mark(_ queue: DispatchQueue) { queue.setSpecific(key: key, value: true) }
}
