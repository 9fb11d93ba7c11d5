import Testing

@testable import Bridges

/// A started stream's memory is mostly its locked state machine: one allocation holding the
/// object header, the state and a four-byte lock. These tests hold the `Int` stream's state to
/// the size that keeps that allocation in glibc's 160-byte size class (the waiting policies'
/// fields live in an object of their own, and the builder in the teardown's payload), so that a new field (or a field moved out of another's padding) that costs a
/// whole size class shows up here, not only in the memory benchmark.
@Suite("CallbackStream: memory layout", .timeLimit(.minutes(3)))
struct CallbackStreamLayoutTests {
    typealias Machine = CallbackStreamStorage<Int, Never>.Machine

    @Test func anIntStreamsState_fitsTheSizeClass() {
        // 16 (object header) + state + padding to the lock's alignment + 4 (lock) ≤ 152 bytes:
        // glibc adds 8 and rounds up to 16, so 152 is the largest request in the 160-byte class.
        let state = MemoryLayout<Machine>.size
        let lockOffset =
            (16 + state + MemoryLayout<PlatformLock>.alignment - 1) / MemoryLayout<PlatformLock>.alignment
            * MemoryLayout<PlatformLock>.alignment
        #expect(
            lockOffset + MemoryLayout<PlatformLock>.size <= 152,
            "state \(state) B: the stream's allocation leaves the 160-byte size class")
    }

    @Test func theOneByteFieldsFillTheInlineSlotsPadding() {
        let bufferEnd = MemoryLayout<Machine>.offset(of: \Machine.buffer)! + MemoryLayout<StreamRing<Int>>.size
        let small = [\Machine.phase, \Machine.mode, \Machine.producerFinished, \Machine.marks]
            .map { MemoryLayout<Machine>.offset(of: $0)! }
        #expect(small.allSatisfy { $0 >= bufferEnd && $0 < MemoryLayout<Machine>.offset(of: \Machine.teardown)! })
        #expect(
            MemoryLayout<Machine.Phase>.size <= 2, "the phase carries a payload again (the builder lives in `teardown`)"
        )
    }

    /// Only the waiting policies carry the senders' and demand's state.
    @Test(arguments: [BufferingPolicy.unbounded, .latest, .dropNewest(4), .dropOldest(4)])
    func nonWaitingPolicies_haveNoWaitingState(_ policy: BufferingPolicy) {
        let machine = CallbackStreamStateMachine<Int, Never, Void>(policy: policy, builder: ())
        #expect(machine.waiting == nil)
        #expect(machine.senders.isEmpty && !machine.hasSenders && machine.demandHandler == nil)
    }

    @Test(arguments: [BufferingPolicy.rendezvous, .suspending(1), .suspending(8), .watermark(low: 2, high: 6)])
    func waitingPolicies_haveTheirState(_ policy: BufferingPolicy) {
        let machine = CallbackStreamStateMachine<Int, Never, Void>(policy: policy, builder: ())
        #expect(machine.waiting != nil)
        if case .watermark = policy.kind {
            #expect(machine.lowWatermark == 2)
        } else {
            #expect(machine.lowWatermark == machine.capacity - 1)
        }
    }

    /// One waiting element takes the buffer's inline slot; a ring replaces it when a second has
    /// to wait, with room for 2, and doubles from there. A consumer that keeps up
    /// never makes it; nor does a policy of capacity 1.
    @Test func oneWaitingElement_allocatesNothing_thenTheRingHoldsTwo_thenDoubles() {
        var unbounded = CallbackStreamStateMachine<Int, Never, Void>(policy: .unbounded, builder: ())
        #expect(unbounded.buffer.capacity == 0, "nothing allocated before the first element")
        unbounded.enqueue(1)
        #expect(unbounded.buffer.capacity == 0, "the first waiting element allocated a ring")
        unbounded.enqueue(2)
        #expect(unbounded.buffer.capacity == 2 && !unbounded.buffer.hasFirst)
        unbounded.enqueue(3)
        unbounded.enqueue(4)
        #expect(unbounded.buffer.capacity == 4)
        #expect((0..<5).map { _ in unbounded.takeBuffered() } == [1, 2, 3, 4, nil])

        var kept = CallbackStreamStateMachine<Int, Never, Void>(policy: .unbounded, builder: ())
        for value in 0..<50 {
            kept.enqueue(value)
            #expect(kept.takeBuffered() == value)
        }
        #expect(kept.buffer.capacity == 0, "a consumer that keeps up made the ring")

        var newest = CallbackStreamStateMachine<Int, Never, Void>(policy: .latest, builder: ())
        newest.enqueue(1)
        #expect(newest.buffer.capacity == 0)
    }
}
