/// The stream engine's buffer: a FIFO of one inline slot, until a second element has to wait
/// behind the first, then a ring whose slots share one allocation with its indices. A stream
/// whose consumer keeps up (at most one element waiting at a time, the common case) never
/// allocates a ring, and neither does a lossy policy of capacity 1.
///
/// The slot is used only while there is no ring: the first growth moves its element into the
/// new ring, and from then on the slot stays empty, so a stream that buffers deeper pays
/// exactly what it paid before the slot existed (one nil check), and order needs no thought.
///
/// A value type stored inline in the state machine and mutated only under the stream's lock (no
/// copy-on-write: it is never copied while in use): growing replaces the ring's reference.
/// Broadcast and the operators collect their decided stream actions in it too (`Outbox`).
@usableFromInline
struct StreamRing<Element> {
    // The reference first: the slot's tail padding (7 bytes for an `Int?`) is then at the end,
    // where the state machine's one-byte fields can use it.
    @usableFromInline var storage: StreamRingStorage<Element>?
    /// The one waiting element while there is no ring (always nil once there is one).
    @usableFromInline var first: Element?

    @inlinable init() {
        storage = nil
        first = nil
    }

    @inlinable var hasFirst: Bool {
        if case .some = first { true } else { false }
    }
    // Through the header pointer, never `ManagedBuffer.header`: that is a class's stored
    // property, so each read would pay a dynamic exclusivity check.
    @inlinable var count: Int {
        if let storage { return storage.withUnsafeMutablePointerToHeader { $0.pointee.count } }
        return hasFirst ? 1 : 0
    }
    @inlinable var isEmpty: Bool { count == 0 }
    /// Ring slots allocated (0 while the inline slot is all there is).
    @inlinable var capacity: Int { storage?.withUnsafeMutablePointerToHeader { $0.pointee.capacity } ?? 0 }

    /// Appends: into the inline slot while there is no ring and it is free, else into the ring,
    /// growing it (out of line) to `initialCapacity` slots first (at least 2 when it takes over
    /// the slot's element), then by doubling up to `maximumCapacity` (lossy policies never hold
    /// more than their capacity).
    @inlinable @inline(__always)
    mutating func append(_ element: __owned Element, initialCapacity: Int, maximumCapacity: Int) {
        if let storage {
            if storage.hasRoom {
                storage.appendWithRoom(element)
                return
            }
        } else if !hasFirst {
            first = element
            return
        }
        grow(initialCapacity: initialCapacity, maximumCapacity: maximumCapacity)
        storage.unsafelyUnwrapped.appendWithRoom(element)
    }

    @inlinable @inline(__always)
    mutating func popFirst() -> Element? {
        if let storage { return storage.popFirst() }
        return first.take()
    }

    /// Takes the whole buffer (to drain outside the lock), leaving it empty and unallocated.
    @inlinable
    mutating func take() -> StreamRing<Element> {
        var taken = StreamRing()
        swap(&taken, &self)
        return taken
    }

    /// Makes room for one more: the first ring (taking over the slot's element), or a ring
    /// twice the size.
    @usableFromInline @inline(never)
    mutating func grow(initialCapacity: Int, maximumCapacity: Int) {
        guard let old = storage else {
            // The slot is taken (that is why this grows): its element moves into the new ring,
            // which has room for it and the element being appended.
            let ring = StreamRingStorage<Element>.make(
                capacity: Swift.max(2, Swift.min(initialCapacity, maximumCapacity)))
            ring.appendWithRoom(first.take().unsafelyUnwrapped)
            storage = ring
            return
        }
        let (count, oldCapacity) = old.withUnsafeMutablePointerToHeader { ($0.pointee.count, $0.pointee.capacity) }
        let newCapacity = Swift.min(oldCapacity &* 2, Swift.max(maximumCapacity, oldCapacity &+ 1))
        let grown = StreamRingStorage<Element>.make(capacity: newCapacity)
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
