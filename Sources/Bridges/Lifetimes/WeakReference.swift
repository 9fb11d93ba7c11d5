/// A weak reference that can cross into a Task: the only way a weak-owner task refers to its owner.
@usableFromInline
struct WeakReference<Object: AnyObject & Sendable>: Sendable {
    @usableFromInline weak var object: Object?

    @inlinable init(_ object: Object) { self.object = object }

    /// The owner's type, for diagnostics.
    @usableFromInline var typeName: String { String(describing: Object.self) }
}
