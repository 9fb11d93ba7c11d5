@testable import Bridges
import Testing

/// The stream engine's buffer: one allocation holding its indices and slots, replaced when it
/// grows. Checked with elements that count their own lives, so that a slot moved twice, dropped
/// or never destroyed shows up.
@Suite("CallbackStream: ring buffer", .timeLimit(.minutes(3)))
struct StreamRingTests {
    /// Counts live instances; every test ends with none left.
    final class Counted {
        let value: Int
        let counter: Counter
        init(_ value: Int, _ counter: Counter) {
            self.value = value
            self.counter = counter
            counter.live += 1
        }
        deinit { counter.live -= 1 }
    }

    final class Counter { var live = 0 }

    @Test func fifoAcrossWrapAroundAndGrowth_keepsOrderAndDestroysEveryElement() {
        let counter = Counter()
        do {
            var ring = StreamRing<Counted>()
            #expect(ring.capacity == 0, "nothing is allocated before the first append")
            var next = 0
            var expected = 0
            // Interleave appends and takes so that the head wraps before every growth.
            for round in 1...6 {
                for _ in 0..<(round * 3) {
                    ring.append(Counted(next, counter), initialCapacity: 4, maximumCapacity: .max)
                    next += 1
                }
                for _ in 0..<(round * 2) {
                    #expect(ring.popFirst()?.value == expected)
                    expected += 1
                }
            }
            #expect(ring.count == next - expected)
            #expect(counter.live == ring.count, "moving into a grown allocation copied or lost elements")
            #expect(ring.capacity >= ring.count && ring.capacity.nonzeroBitCount == 1, "4, then doubling: \(ring.capacity)")
            // Dropped with elements still inside: the storage's deinit destroys them.
        }
        #expect(counter.live == 0, "elements left in a released ring were not destroyed")
    }

    @Test func lossyGrowth_stopsAtTheMaximum() {
        var ring = StreamRing<Int>()
        for value in 0..<3 { ring.append(value, initialCapacity: 2, maximumCapacity: 3) }
        #expect(ring.capacity == 3, "2, then at most the maximum")
        var one = StreamRing<Int>()
        one.append(1, initialCapacity: 8, maximumCapacity: 1)
        #expect(one.capacity == 1)
    }

    @Test func take_leavesItEmptyAndUnallocated_andTheTakenStorageDrains() {
        let counter = Counter()
        do {
            var ring = StreamRing<Counted>()
            for value in 0..<5 { ring.append(Counted(value, counter), initialCapacity: 4, maximumCapacity: .max) }
            _ = ring.popFirst()
            let taken = ring.take()
            #expect(ring.capacity == 0 && ring.isEmpty)
            var drained: [Int] = []
            while let element = taken?.popFirst() { drained.append(element.value) }
            #expect(drained == [1, 2, 3, 4])
        }
        #expect(counter.live == 0)
    }
}
