/// A FIFO ring buffer with reference semantics, for the stream engine's buffered elements.
///
/// Reference semantics on purpose: it lives inside a state machine that is itself inside a
/// lock, and is only ever mutated under that lock, so copy-on-write would only cost uniqueness
/// checks (and a copy whenever an enum payload is extracted). Storage is allocated on the first
/// append and grows by doubling; elements are moved, never copied, when it grows.
@usableFromInline
final class RingBuffer<Element> {
    // Unchecked exclusivity: every access happens under the stream's lock, so the runtime's
    // dynamic exclusivity checks on these class properties can never fire, and they cost 42% of
    // a buffered yield + next (callgrind: 1 639 → 949 instructions per element).
    @exclusivity(unchecked) @usableFromInline var storage: UnsafeMutablePointer<Element>?
    @exclusivity(unchecked) @usableFromInline var capacity = 0
    @exclusivity(unchecked) @usableFromInline var head = 0
    @exclusivity(unchecked) @usableFromInline var count = 0
    /// Slots allocated on the first append.
    @usableFromInline let initialCapacity: Int
    /// The buffer never holds more than this (lossy policies): growth stops there.
    @usableFromInline let maximumCapacity: Int

    @inlinable init(initialCapacity: Int = 8, maximumCapacity: Int = .max) {
        self.initialCapacity = Swift.max(1, Swift.min(initialCapacity, maximumCapacity))
        self.maximumCapacity = maximumCapacity
    }

    @inlinable
    deinit {
        removeAll()
        storage?.deallocate()
    }

    @inlinable var isEmpty: Bool { count == 0 }

    @inlinable @inline(__always)
    func append(_ element: __owned Element) {
        if count == capacity { grow() }
        var index = head &+ count
        if index >= capacity { index &-= capacity }
        (storage.unsafelyUnwrapped + index).initialize(to: element)
        count &+= 1
    }

    @inlinable @inline(__always)
    func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = (storage.unsafelyUnwrapped + head).move()
        head &+= 1
        if head == capacity { head = 0 }
        count &-= 1
        return element
    }

    @inlinable
    func removeAll() {
        while count > 0 { _ = popFirst() }
        head = 0
    }

    @usableFromInline
    func grow() {
        let newCapacity = capacity == 0 ? initialCapacity : Swift.min(capacity &* 2, Swift.max(maximumCapacity, capacity &+ 1))
        let newStorage = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
        if let storage {
            let firstPart = Swift.min(count, capacity - head)
            (newStorage).moveInitialize(from: storage + head, count: firstPart)
            (newStorage + firstPart).moveInitialize(from: storage, count: count - firstPart)
            storage.deallocate()
        }
        storage = newStorage
        capacity = newCapacity
        head = 0
    }
}
