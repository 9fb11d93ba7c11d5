/// Ties one weak-owner task to a token in its owner's ``CancellationBag``: an ``OwnedTask``
/// (attach after the token exists, cancel-before-attach remembered, first of cancel and end
/// wins) plus the opt-in lifetime checks.
///
/// When the task ends by itself it cancels its own token, so the bag can prune it.
@usableFromInline
final class OwnedTaskControl: Sendable {
    @usableFromInline
    struct Watch: Sendable {
        /// The task returned.
        var ended = false
        /// Watching for a task that does not end after cancellation (lifetime check only).
        var watchdog: Task<Void, Never>?
    }

    /// The task, and whether it was cancelled or ended: the shared owned-task core.
    @usableFromInline let core = OwnedTask()
    private let watch = LockedState<Watch>(Watch())
    private let check: OwnerLifetimeCheck
    private let site: CallSite
    /// Tells the checks whether the owner is still alive, without keeping it alive.
    private let ownerIsAlive: @Sendable () -> Bool
    private let ownerType: String
    private let what: String

    @usableFromInline
    init(check: OwnerLifetimeCheck, site: CallSite, ownerType: String, what: String, ownerIsAlive: @escaping @Sendable () -> Bool) {
        self.check = check
        self.site = site
        self.ownerType = ownerType
        self.what = what
        self.ownerIsAlive = ownerIsAlive
    }

    /// Hands over the Task; cancels it at once if the token was cancelled meanwhile.
    @usableFromInline
    func attach(_ task: Task<Void, Never>) { core.attach(task) }

    /// The token's action: the bag was emptied or deallocated.
    @usableFromInline
    func cancel() {
        core.cancel()
        let ended = watch.withLock { $0.ended }
        guard !ended, check.enabled, let grace = check.grace, !ownerIsAlive() else { return }
        // The owner is gone and the task was told to stop: it must end within the grace period.
        let watchdog = Task { [self] in
            do { try await grace.sleep() } catch { return }
            guard !watch.withLock({ $0.ended }) else { return }
            site.report(
                .ownerLifetime,
                "\(what) still runs \(grace.description) after its owner \(ownerType) was deallocated and cancelled it: "
                    + "the sequence or work it awaits ignores task cancellation",
                bridge: self
            )
        }
        let stale = watch.withLock { state -> Bool in
            if state.ended { return true }
            state.watchdog = watchdog
            return false
        }
        if stale { watchdog.cancel() }
    }

    /// Whether the token was cancelled (the bag went away or was emptied).
    @usableFromInline
    var isCancelRequested: Bool { !core.isActive }

    /// The loop found its owner gone. Reports when nobody cancelled it (check on): the bag
    /// passed to it is not released with the owner.
    @usableFromInline
    func foundOwnerGone() {
        guard check.enabled, core.isActive else { return }
        site.report(
            .ownerLifetime,
            "\(what) ran on after its owner \(ownerType) was deallocated: it was not cancelled, so the bag passed "
                + "to it is not released with the owner (pass the owner's own `let bag = CancellationBag()`)",
            bridge: self
        )
    }

    /// The task is returning. `token` is cancelled so the bag drops it.
    @usableFromInline
    func ended(token: Cancellation) {
        core.finish()
        let watchdog = watch.withLock { state -> Task<Void, Never>? in
            state.ended = true
            defer { state.watchdog = nil }
            return state.watchdog
        }
        watchdog?.cancel()
        token.cancel()
    }

    /// Makes the control and its token. Attach the task next, THEN store the token in the bag:
    /// until then nobody can reach the token, so no cancel can come before the Task is attached
    /// (it would find no Task to cancel, and a handler call already under way would not see
    /// its task cancelled).
    @usableFromInline
    static func make(
        check: OwnerLifetimeCheck,
        site: CallSite,
        ownerType: String,
        what: String,
        ownerIsAlive: @escaping @Sendable () -> Bool
    ) -> (OwnedTaskControl, Cancellation) {
        let control = OwnedTaskControl(check: check, site: site, ownerType: ownerType, what: what, ownerIsAlive: ownerIsAlive)
        let token = Cancellation { control.cancel() }
        return (control, token)
    }
}
