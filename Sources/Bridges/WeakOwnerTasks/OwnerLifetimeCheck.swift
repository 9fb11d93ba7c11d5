/// An opt-in debug check for tasks that outlive their owner and owners kept alive by their tasks.
///
/// Weak-owner tasks (`forEach(weak:in:)`,
/// ``runTask(weak:in:isolation:lifetimeCheck:fileID:line:operation:then:)``) with a check on report through
/// ``Diagnostics`` with kind ``BridgeDiagnostic/Kind/ownerLifetime`` when:
/// - the owner was deallocated but the task was not cancelled (an element arrived to find the
///   owner gone): the `bag` passed is not released with the owner;
/// - the owner was deallocated and its bag cancelled the task, but the task still runs after the
///   grace period: the sequence or the work ignores cancellation.
///
/// ``expectRelease(of:within:fileID:line:)`` catches the other direction, an owner kept alive
/// by its own task (the naive `Task { for await x in seq { self.x = x } }`).
///
/// <!-- snippet: body — at app start -->
/// ```swift
/// #if DEBUG
/// OwnerLifetimeCheck.default = .after(.after(.seconds(2)))   // at app start
/// #endif
/// ```
public struct OwnerLifetimeCheck: Sendable, CustomStringConvertible {
    @usableFromInline let enabled: Bool
    @usableFromInline let grace: BridgeTimeout?

    /// No checks: the default, and what release builds should use.
    public static let off = OwnerLifetimeCheck(enabled: false, grace: nil)

    /// Reports a task that is still running `grace` after its owner was deallocated, and a task
    /// that finds its owner gone without having been cancelled.
    public static func after(_ grace: BridgeTimeout) -> OwnerLifetimeCheck {
        OwnerLifetimeCheck(enabled: true, grace: grace)
    }

    private static let global = LockedState<OwnerLifetimeCheck>(.off)

    /// The check weak-owner tasks use when none is passed. `.off` unless you set it (in a debug
    /// build, at start-up). Read when each task starts.
    public static var `default`: OwnerLifetimeCheck {
        get { global.withLock { $0 } }
        set { global.withLock { $0 = newValue } }
    }

    public var description: String {
        enabled ? "OwnerLifetimeCheck(\(grace.map(\.description) ?? "no grace"))" : "OwnerLifetimeCheck.off"
    }

    /// Checks that `object` is deallocated within `grace`, and reports it through ``Diagnostics``
    /// (kind ``BridgeDiagnostic/Kind/ownerLifetime``) if it is not. Call it where the object's
    /// last owner lets go (a screen closes), typically in debug builds and tests.
    ///
    /// The classic finding is an owner kept alive by its own task:
    /// `Task { for await x in seq { self.x = x } }` holds `self` strongly for as long as the
    /// sequence runs; `forEach(weak:in:)` fixes it.
    ///
    /// - Returns: A task that ends when the check is done, with `true` if the object was released.
    ///   The caller does not keep `object` alive while waiting.
    @discardableResult
    public static func expectRelease<Object: AnyObject & Sendable>(
        of object: Object,
        within grace: BridgeTimeout,
        fileID: String = #fileID,
        line: UInt = #line
    ) -> Task<Bool, Never> {
        let reference = WeakReference(object)
        let site = CallSite(fileID: fileID, line: line)
        return Task {
            try? await grace.sleep()
            guard reference.object != nil else { return true }
            site.report(
                .ownerLifetime,
                "\(reference.typeName) was not released within \(grace.span) of expectRelease(of:within:): something "
                    + "still holds it strongly. Look first for a Task that captures self for as long as it runs "
                    + "(Task { for await x in seq { self.x = x } }): consume the sequence with forEach(weak:in:), or run "
                    + "the work with runTask(weak:in:); then for a closure stored on an object it owns (a cycle), or a "
                    + "delegate proxy whose stream was never torn down.",
                bridge: nil  // one check, one report
            )
            return false
        }
    }
}

/// Whether running on `isolation` would keep `owner` alive.
///
/// A Task that runs on an actor holds that actor strongly. When the caller's isolation *is* the
/// owner (`forEach(weak: self, …)` inside an `actor`), running there would keep the owner alive
/// for as long as the task runs: weak-owner tasks then run on the global executor instead, and
/// the handler hops to its own isolation for each call. Global actors (`@MainActor`) are never
/// owners, so view models keep the hop-free path.
@inlinable
func _isolationIsOwner(_ owner: AnyObject, _ isolation: (any Actor)?) -> Bool {
    guard let isolation else { return false }
    return (isolation as AnyObject) === owner
}
