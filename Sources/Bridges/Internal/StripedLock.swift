/// A fixed table of locks shared by small objects that must not pay for a lock of their own
/// (a lock word and its padding in every object, and, where the platform lock is a
/// `pthread_mutex_t`, an init/destroy pair per object): ``Cancellation`` and
/// the single-shot bridge's storage, and the `publisher.stream` subscriber. An object's lock is picked by its address.
///
/// Rules that keep sharing safe: a striped lock is held only around a few loads and stores of
/// the object's own fields, never while calling out, resuming, or taking another lock (so two
/// objects that share a stripe can never deadlock), and never across an `await`.
@usableFromInline
package struct _StripedLocks: @unchecked Sendable {
    // @unchecked Sendable: the table is created once (a `static let`, so thread-safe lazy
    // initialisation), never freed or moved, and each entry is a lock made for sharing.
    @usableFromInline let table: UnsafeMutablePointer<PlatformLock>

    @usableFromInline package static let count = 64   // a power of two

    /// Locks apart in the table, in `PlatformLock`s: one per cache line, so that threads taking
    /// different stripes do not bounce one line between cores (a lock is 4 bytes on Apple
    /// platforms and Linux: 16 would share a 64-byte line).
    @inlinable static var spacing: Int { max(1, (cacheLine + MemoryLayout<PlatformLock>.stride - 1) / MemoryLayout<PlatformLock>.stride) }

    /// 128 bytes on arm64 (Apple silicon's lines; harmless where they are 64), 64 elsewhere.
    @inlinable static var cacheLine: Int {
        #if arch(arm64)
        128
        #else
        64
        #endif
    }

    @usableFromInline static let shared: _StripedLocks = {
        let table = UnsafeMutableRawPointer.allocate(byteCount: count * spacing * MemoryLayout<PlatformLock>.stride, alignment: cacheLine)
            .bindMemory(to: PlatformLock.self, capacity: count * spacing)
        for i in 0..<count { _initializeLock(table + i * spacing) }
        return _StripedLocks(table: table)
    }()

    @inlinable init(table: UnsafeMutablePointer<PlatformLock>) { self.table = table }

    /// The lock of `object`: the same one for the object's whole life.
    @inlinable
    static func lock(for object: AnyObject) -> UnsafeMutablePointer<PlatformLock> {
        // Heap objects are 16-byte aligned: drop those bits, then spread the rest a little.
        let address = UInt(bitPattern: ObjectIdentifier(object))   // not `hashValue`: that runs SipHash
        let index = Int(truncatingIfNeeded: (address >> 4) ^ (address >> 10)) & (count - 1)
        return shared.table + index * spacing
    }

    /// Runs `body` with `object`'s lock held. `body` must only read and write `object`'s fields.
    @inlinable
    package static func withLock<R>(for object: AnyObject, _ body: () throws -> R) rethrows -> R {
        let lock = lock(for: object)
        _lock(lock)
        defer { _unlock(lock) }
        return try body()
    }
}
