import Testing

@testable import Bridges

/// The stream engine's buffer: an inline slot until a second element waits, then a ring whose
/// indices and slots share one allocation, replaced when it grows. Checked with elements that count their own lives, so
/// that a slot moved twice, dropped or never destroyed shows up, and against a plain array as
/// the model of a FIFO.
@Suite("CallbackStream: ring buffer", .timeLimit(.minutes(3)))
struct StreamRingTests {
    /// Counts live instances; every test ends with none left.
    final class Counted {
        let value: Int
        let counter: LiveTally
        init(_ value: Int, _ counter: LiveTally) {
            self.value = value
            self.counter = counter
            counter.live += 1
        }
        deinit { counter.live -= 1 }
    }

    final class LiveTally { var live = 0 }

    @Test func fifoAcrossWrapAroundAndGrowth_keepsOrderAndDestroysEveryElement() {
        let counter = LiveTally()
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
            #expect(!ring.hasFirst, "the slot is used again after a ring was made")
            #expect(
                ring.capacity >= ring.count && ring.capacity.nonzeroBitCount == 1, "4, then doubling: \(ring.capacity)")
            // Dropped with elements still inside: the slot and the storage's deinit destroy them.
        }
        #expect(counter.live == 0, "elements left in a released ring were not destroyed")
    }

    /// A consumer that keeps up (one element waiting at a time) never makes the ring.
    @Test func oneAtATime_usesTheSlotAndAllocatesNothing() {
        var ring = StreamRing<Int>()
        for value in 0..<100 {
            ring.append(value, initialCapacity: 2, maximumCapacity: .max)
            #expect(ring.count == 1)
            #expect(ring.popFirst() == value)
            #expect(ring.isEmpty && ring.popFirst() == nil)
        }
        #expect(ring.capacity == 0, "a ring was allocated for one waiting element")
    }

    /// A second waiting element makes the ring and moves the slot's element into it, first in
    /// line; from then on the slot stays empty, even when the ring drains.
    @Test func aSecondWaitingElement_movesTheSlotIntoTheRing_forGood() {
        var ring = StreamRing<Int>()
        ring.append(1, initialCapacity: 2, maximumCapacity: .max)
        #expect(ring.hasFirst && ring.capacity == 0)
        ring.append(2, initialCapacity: 2, maximumCapacity: .max)
        #expect(!ring.hasFirst && ring.capacity == 2 && ring.count == 2)
        ring.append(3, initialCapacity: 2, maximumCapacity: .max)
        #expect([ring.popFirst(), ring.popFirst(), ring.popFirst(), ring.popFirst()] == [1, 2, 3, nil])
        ring.append(4, initialCapacity: 2, maximumCapacity: .max)
        #expect(!ring.hasFirst && ring.count == 1, "the slot was used while a ring exists")
        #expect(ring.popFirst() == 4 && ring.isEmpty)
    }

    /// Random appends and takes against an array: the same elements in the same order, every
    /// element destroyed once. The slot, wrap-around and growth interleave in every pattern.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func randomOperations_matchAnArray(seed: UInt64) {
        var generator = SplitMix(seed: seed)
        let counter = LiveTally()
        do {
            var ring = StreamRing<Counted>()
            var model: [Int] = []
            var next = 0
            for _ in 0..<4_000 {
                // Bias the walk so the depth wanders between empty and a few dozen.
                let appendBias = Int(generator.next() % 3)
                if generator.next() % 4 < appendBias + 1 {
                    ring.append(Counted(next, counter), initialCapacity: 2, maximumCapacity: .max)
                    model.append(next)
                    next += 1
                } else {
                    let expected = model.isEmpty ? nil : model.removeFirst()
                    #expect(ring.popFirst()?.value == expected)
                }
                #expect(ring.count == model.count)
                #expect(counter.live == model.count)
                if ring.count > 64 {
                    while let element = ring.popFirst() { #expect(element.value == model.removeFirst()) }
                }
            }
        }
        #expect(counter.live == 0)
    }

    @Test func lossyGrowth_stopsAtTheMaximum() {
        var ring = StreamRing<Int>()
        for value in 0..<3 { ring.append(value, initialCapacity: 2, maximumCapacity: 3) }
        #expect(ring.capacity == 3, "2, then at most the maximum")
        #expect([ring.popFirst(), ring.popFirst(), ring.popFirst()] == [0, 1, 2])
        var one = StreamRing<Int>()
        one.append(1, initialCapacity: 8, maximumCapacity: 1)
        #expect(one.capacity == 0 && one.count == 1, "a capacity of 1 is the slot alone")
    }

    @Test func take_leavesItEmptyAndUnallocated_andTheTakenBufferDrainsInOrder() {
        let counter = LiveTally()
        do {
            var ring = StreamRing<Counted>()
            for value in 0..<5 { ring.append(Counted(value, counter), initialCapacity: 4, maximumCapacity: .max) }
            _ = ring.popFirst()
            ring.append(Counted(5, counter), initialCapacity: 4, maximumCapacity: .max)
            var taken = ring.take()
            #expect(ring.capacity == 0 && ring.isEmpty && !ring.hasFirst)
            var drained: [Int] = []
            while let element = taken.popFirst() { drained.append(element.value) }
            #expect(drained == [1, 2, 3, 4, 5])

            // The slot alone.
            var slotted = StreamRing<Counted>()
            slotted.append(Counted(9, counter), initialCapacity: 2, maximumCapacity: .max)
            var takenWithSlot = slotted.take()
            #expect(slotted.isEmpty && !slotted.hasFirst && slotted.capacity == 0)
            drained = []
            while let element = takenWithSlot.popFirst() { drained.append(element.value) }
            #expect(drained == [9])
        }
        #expect(counter.live == 0)
    }
}

/// A small deterministic generator (SplitMix64), so a failing seed reproduces.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
