extension Lock {
    /// How many stripes the shared table has (a power of two).
    @usableFromInline package static let stripeCount = 64

    /// The shared table's stripe for the object at `address`, the same one for its whole life.
    ///
    /// For small objects that must not pay for a lock of their own: ``Cancellation``, the
    /// single-shot bridge's storage, the `publisher.stream` subscriber. A stripe is held only
    /// around a few loads and stores of the object's own fields, never while calling out,
    /// resuming, taking another lock or suspending, so two objects that share one can never
    /// deadlock.
    @inlinable
    static func stripe(for address: UnsafeRawPointer) -> UnsafeMutablePointer<PlatformLock> {
        // Heap objects are 16-byte aligned: drop those bits, then spread the rest a little.
        let bits = UInt(bitPattern: address)
        let index = Int(truncatingIfNeeded: (bits >> 4) ^ (bits >> 10)) & (stripeCount - 1)
        return _StripeTable.shared.words + index * _StripeTable.spacing
    }

    /// The shared table's lock for `object`, shown to ThreadSanitizer as the object's own.
    @inlinable
    package static func striped(for object: AnyObject) -> Lock {
        let address = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        return Lock(stripe: stripe(for: address), for: address)
    }
}

/// The stripes of ``Lock/stripe(for:)``: made once, never freed or moved.
@usableFromInline
struct _StripeTable: @unchecked Sendable {
    // @unchecked Sendable: created once (a `static let`, so thread-safe lazy initialisation),
    // never freed or moved, and each entry is a lock made for sharing.
    @usableFromInline let words: UnsafeMutablePointer<PlatformLock>

    /// Locks apart in the table, in `PlatformLock`s: one per cache line, so that threads taking
    /// different stripes do not bounce one line between cores.
    @inlinable static var spacing: Int {
        max(1, (cacheLine + MemoryLayout<PlatformLock>.stride - 1) / MemoryLayout<PlatformLock>.stride)
    }

    /// 128 bytes on arm64 (Apple silicon's lines; harmless where they are 64), 64 elsewhere.
    @inlinable static var cacheLine: Int {
        #if arch(arm64)
        128
        #else
        64
        #endif
    }

    @usableFromInline static let shared: _StripeTable = {
        let count = Lock.stripeCount * spacing
        let words = UnsafeMutableRawPointer.allocate(
            byteCount: count * MemoryLayout<PlatformLock>.stride, alignment: cacheLine
        )
        .bindMemory(to: PlatformLock.self, capacity: count)
        for i in 0..<Lock.stripeCount { _ = Lock.initialize(words + i * spacing) }
        return _StripeTable(words: words)
    }()

    @inlinable init(words: UnsafeMutablePointer<PlatformLock>) { self.words = words }
}
