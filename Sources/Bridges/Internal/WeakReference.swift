/// A weak reference that can cross into a Task: the only way a weak-owner task refers to its owner.
@usableFromInline
struct WeakReference<Object: AnyObject & Sendable>: Sendable {
    @usableFromInline weak var object: Object?

    @inlinable init(_ object: Object) { self.object = object }

    /// The owner's type, for diagnostics.
    @usableFromInline var typeName: String { String(describing: Object.self) }
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
