/// A weak reference that can cross into a Task: the package's one weak box. Weak-owner tasks,
/// `collectLatest(weak:)` and `observations(of:)` refer to their owner (or model) only through it.
@usableFromInline
struct WeakReference<Object: AnyObject & Sendable>: Sendable {
    @usableFromInline weak var object: Object?

    @inlinable init(_ object: Object) { self.object = object }

    /// The owner's type, for diagnostics.
    @usableFromInline var typeName: String { String(describing: Object.self) }
}
