@testable import Bridges
import Testing

/// A started stream's memory is mostly its locked state machine: one allocation holding the
/// object header, the state and a four-byte lock. These tests hold the `Int` stream's state to
/// the size that keeps that allocation in glibc's 208-byte size class, so that a new field (or a
/// field moved out of another's padding) that costs a whole size class shows up here, not only
/// in the memory benchmark.
@Suite("CallbackStream: memory layout", .timeLimit(.minutes(3)))
struct CallbackStreamLayoutTests {
    typealias Machine = CallbackStreamStorage<Int, Never>.Machine

    @Test func anIntStreamsState_fitsTheSizeClass() {
        // 16 (object header) + state + padding to the lock's alignment + 4 (lock) ≤ 200 bytes:
        // glibc adds 8 and rounds up to 16, so 200 is the largest request in the 208-byte class.
        let state = MemoryLayout<Machine>.size
        let lockOffset = (16 + state + MemoryLayout<PlatformLock>.alignment - 1) / MemoryLayout<PlatformLock>.alignment * MemoryLayout<PlatformLock>.alignment
        #expect(lockOffset + MemoryLayout<PlatformLock>.size <= 200, "state \(state) B: the stream's allocation leaves the 208-byte size class")
    }

    @Test func theOneByteFieldsFillThePhasesPadding() {
        let phaseEnd = MemoryLayout<Machine>.offset(of: \Machine.phase)! + MemoryLayout<Machine.Phase>.size
        let mode = MemoryLayout<Machine>.offset(of: \Machine.mode)!
        let flags = [mode, MemoryLayout<Machine>.offset(of: \Machine.producerFinished)!, MemoryLayout<Machine>.offset(of: \Machine.reportedYieldAfterFinish)!]
        #expect(flags.allSatisfy { $0 >= phaseEnd && $0 < MemoryLayout<Machine>.offset(of: \Machine.teardown)! })
    }

    /// The buffer is allocated on the first append with room for 2 (1 under a policy of
    /// capacity 1), and doubles from there: a mostly drained `Int` stream keeps a 64-byte chunk.
    @Test func theFirstBufferHoldsTwo_thenDoubles() {
        var unbounded = CallbackStreamStateMachine<Int, Never, Void>(policy: .unbounded, builder: ())
        #expect(unbounded.buffer.capacity == 0, "nothing allocated before the first element")
        unbounded.enqueue(1)
        #expect(unbounded.buffer.capacity == 2)
        unbounded.enqueue(2)
        unbounded.enqueue(3)
        #expect(unbounded.buffer.capacity == 4)

        var newest = CallbackStreamStateMachine<Int, Never, Void>(policy: .latest, builder: ())
        newest.enqueue(1)
        #expect(newest.buffer.capacity == 1)
    }
}
