/// The stream engine's buffer: a FIFO ring whose slots share one allocation with its indices,
/// made on the first append (a started stream that never buffers allocates nothing for it).
///
/// A value type holding one optional reference, stored inline in the state machine and mutated
/// only under the stream's lock (no copy-on-write: it is never copied while in use): growing
/// replaces the reference. Broadcast's job queue uses it too.
@usableFromInline
struct StreamRing<Element> {
    @usableFromInline var storage: StreamRingStorage<Element>?

    @inlinable init() { storage = nil }

    // Through the header pointer, never `ManagedBuffer.header`: that is a class's stored
    // property, so each read would pay a dynamic exclusivity check (≈ 25 instructions).
    @inlinable var count: Int { storage?.withUnsafeMutablePointerToHeader { $0.pointee.count } ?? 0 }
    @inlinable var isEmpty: Bool { count == 0 }
    /// Slots allocated (0 before the first append).
    @inlinable var capacity: Int { storage?.withUnsafeMutablePointerToHeader { $0.pointee.capacity } ?? 0 }

    /// Appends, growing (out of line) to `initialCapacity` slots first, then by doubling up to
    /// `maximumCapacity` (lossy policies never hold more than their capacity).
    @inlinable @inline(__always)
    mutating func append(_ element: __owned Element, initialCapacity: Int, maximumCapacity: Int) {
        if let storage, storage.hasRoom {
            storage.appendWithRoom(element)
            return
        }
        grow(initialCapacity: initialCapacity, maximumCapacity: maximumCapacity)
        storage.unsafelyUnwrapped.appendWithRoom(element)
    }

    @inlinable @inline(__always)
    mutating func popFirst() -> Element? {
        guard let storage else { return nil }
        return storage.popFirst()
    }

    /// Takes the whole buffer (to drain outside the lock), leaving it empty and unallocated.
    @inlinable
    mutating func take() -> StreamRingStorage<Element>? {
        defer { storage = nil }
        return storage
    }

    @usableFromInline @inline(never)
    mutating func grow(initialCapacity: Int, maximumCapacity: Int) {
        let count = self.count
        let oldCapacity = capacity
        let newCapacity = oldCapacity == 0
            ? Swift.max(1, Swift.min(initialCapacity, maximumCapacity))
            : Swift.min(oldCapacity &* 2, Swift.max(maximumCapacity, oldCapacity &+ 1))
        let grown = StreamRingStorage<Element>.make(capacity: newCapacity)
        if let old = storage {
            old.withUnsafeMutablePointers { header, slots in
                grown.withUnsafeMutablePointers { newHeader, newSlots in
                    let head = header.pointee.head
                    let firstPart = Swift.min(count, oldCapacity - head)
                    newSlots.moveInitialize(from: slots + head, count: firstPart)
                    (newSlots + firstPart).moveInitialize(from: slots, count: count - firstPart)
                    newHeader.pointee.count = count
                    header.pointee.count = 0  // moved out: the old storage's deinit destroys nothing
                    header.pointee.head = 0
                }
            }
        }
        storage = grown
    }
}

@usableFromInline
struct StreamRingHeader {
    @usableFromInline var head: Int
    @usableFromInline var count: Int
    @usableFromInline let capacity: Int

    @inlinable init(capacity: Int) {
        (head, count, self.capacity) = (0, 0, capacity)
    }
}

/// The slots of a ``StreamRing`` and its indices, in one allocation.
@usableFromInline
final class StreamRingStorage<Element>: ManagedBuffer<StreamRingHeader, Element> {
    @inlinable
    static func make(capacity: Int) -> StreamRingStorage<Element> {
        let buffer = create(minimumCapacity: capacity) { _ in StreamRingHeader(capacity: capacity) }
        // `ManagedBuffer.create` returns an instance of the class it is called on.
        return unsafeDowncast(buffer, to: StreamRingStorage<Element>.self)
    }

    @inlinable
    deinit {
        withUnsafeMutablePointers { header, slots in
            var index = header.pointee.head
            for _ in 0..<header.pointee.count {
                (slots + index).deinitialize(count: 1)
                index &+= 1
                if index == header.pointee.capacity { index = 0 }
            }
        }
    }

    @inlinable @inline(__always)
    var hasRoom: Bool {
        withUnsafeMutablePointerToHeader { $0.pointee.count < $0.pointee.capacity }
    }

    @inlinable @inline(__always)
    func appendWithRoom(_ element: __owned Element) {
        withUnsafeMutablePointers { header, slots in
            var index = header.pointee.head &+ header.pointee.count
            if index >= header.pointee.capacity { index &-= header.pointee.capacity }
            (slots + index).initialize(to: element)
            header.pointee.count &+= 1
        }
    }

    @inlinable @inline(__always)
    func popFirst() -> Element? {
        withUnsafeMutablePointers { header, slots in
            guard header.pointee.count > 0 else { return nil }
            let element = (slots + header.pointee.head).move()
            header.pointee.head &+= 1
            if header.pointee.head == header.pointee.capacity { header.pointee.head = 0 }
            header.pointee.count &-= 1
            return element
        }
    }
}
