/// One weak-owner task (`forEach(weak:)`, `runTask(weak:)`): the owned-task core (``OwnedTask``:
/// attach after the token exists, a cancel before attach remembered, first of cancel and end
/// wins, the lifetime watchdog) plus what the opt-in lifetime checks report. A value: every
/// decision is the core's, under its lock.
///
/// When the task ends by itself it cancels its own token, so the bag can prune it.
@usableFromInline
struct WeakOwnerTask: Sendable {
    /// The task, whether it was cancelled or ended, and the watchdog.
    @usableFromInline let core = OwnedTask()
    private let check: OwnerLifetimeCheck
    private let site: CallSite
    /// Tells the checks whether the owner is still alive, without keeping it alive.
    private let ownerIsAlive: @Sendable () -> Bool
    private let ownerType: String
    private let what: String

    private init(
        check: OwnerLifetimeCheck, site: CallSite, ownerType: String, what: String,
        ownerIsAlive: @escaping @Sendable () -> Bool
    ) {
        self.check = check
        self.site = site
        self.ownerType = ownerType
        self.what = what
        self.ownerIsAlive = ownerIsAlive
    }

    /// Makes the task's core and its token. Attach the task next, THEN store the token in the
    /// bag: until then nobody can reach the token, so no cancel can come before the Task is
    /// attached (it would find no Task to cancel, and a handler call already under way would not
    /// see its task cancelled).
    @usableFromInline
    static func make(
        check: OwnerLifetimeCheck,
        site: CallSite,
        ownerType: String,
        what: String,
        ownerIsAlive: @escaping @Sendable () -> Bool
    ) -> (WeakOwnerTask, Cancellation) {
        let task = WeakOwnerTask(check: check, site: site, ownerType: ownerType, what: what, ownerIsAlive: ownerIsAlive)
        let token = Cancellation { task.cancel() }
        return (task, token)
    }

    /// Hands over the Task; cancels it at once if the token was cancelled meanwhile.
    @usableFromInline
    func attach(_ task: Task<Void, Never>) { core.attach(task) }

    /// The token's action: the bag was emptied or deallocated.
    @usableFromInline
    func cancel() {
        core.cancel()
        guard check.enabled, let grace = check.grace, !core.hasReturned, !ownerIsAlive() else { return }
        // The owner is gone and the task was told to stop: it must end within the grace period.
        core.watch(
            Task { [self] in
                do { try await grace.sleep() } catch { return }
                guard !core.hasReturned else { return }
                site.report(
                    .ownerLifetime,
                    "\(what) still runs \(grace.span) after its owner \(ownerType) was deallocated and cancelled it: "
                        + "the sequence or work it awaits ignores task cancellation. Make it stop when cancelled (check "
                        + "Task.isCancelled in its loop, or return a Cancellation that stops the legacy call).",
                    bridge: core
                )
            })
    }

    /// The loop found its owner gone. Reports when nobody cancelled it (check on): the bag
    /// passed to it is not released with the owner.
    @usableFromInline
    func foundOwnerGone() {
        guard check.enabled, core.isActive else { return }
        site.report(
            .ownerLifetime,
            "\(what) ran on after its owner \(ownerType) was deallocated: it was not cancelled, so the bag passed "
                + "to it is not released with the owner (pass the owner's own `let bag = CancellationBag()`)",
            bridge: core
        )
    }

    /// The task is returning. `token` is cancelled so the bag drops it.
    @usableFromInline
    func ended(token: Cancellation) {
        core.taskReturned()
        token.cancel()
    }
}
