import Dispatch
import TestSupport
import Testing

@testable import Bridges

@Suite("Weak-owner tasks: stress", .timeLimit(.minutes(2)))
struct WeakOwnerStressTests {
    /// 2 000 times: another thread drops the owner (even iterations) or empties its bag (odd
    /// iterations) while the loop starts and handles the elements its `CallbackStream` producer
    /// yields at once. Every time: the loop ends, the producer is torn down exactly once if it
    /// was started (never otherwise), elements arrive in order, the Task and the owner are
    /// released.
    @Test func ownerDeathOrCancelAll_racingStartAndElements_2_000_iterations() async {
        let iterations = 2_000
        var handled = 0
        var started = 0
        for index in 0..<iterations {
            let builds = Collected<Int>()
            let teardowns = Collected<Int>()
            let stream = CallbackStream<Int, Never> { sink in
                builds.append(index)
                for value in 0..<3 { _ = sink.yield(value) }
                return Cancellation {
                    _ = sink
                    teardowns.append(index)
                }  // keeps the sink until teardown
            }
            let deinitGate = Gate()
            let taskEnded = Gate()
            let calls = Collected<Int>()
            let box = LockedState<PlainOwner?>(PlainOwner(deinitGate: deinitGate))
            // Only `box` holds the owner, and nothing but the owner holds its bag.
            Self.startLoop(owner: box.withLock { $0 }!, stream: stream, calls: calls, probe: DeinitSignal(taskEnded))
            let stopperDone = Gate()
            DispatchQueue.global().async {
                if index.isMultiple(of: 2) {
                    box.withLock { $0 = nil }  // the owner's last reference
                } else {
                    box.withLock { $0 }?.bag.cancelAll()  // the owner stays alive
                }
                stopperDone.open()
            }
            await stopperDone.wait()
            await taskEnded.wait()  // teardown runs in the loop's Task, before it ends
            let bagEmpty = box.withLock { $0?.bag.isEmpty } ?? true
            box.withLock { $0 = nil }
            await deinitGate.wait()

            #expect(builds.count <= 1)
            #expect(
                teardowns.count == builds.count,
                "iteration \(index): \(builds.count) builds, \(teardowns.count) teardowns")
            #expect(calls.values == Array(0..<calls.count), "elements in order, none twice")
            #expect(bagEmpty)
            handled += calls.count
            started += builds.count
        }
        print(
            "weak-owner stress: \(started) of \(iterations) producers started, \(handled) elements handled before the stop"
        )
    }

    private static func startLoop(
        owner: PlainOwner, stream: CallbackStream<Int, Never>, calls: Collected<Int>, probe: DeinitSignal
    ) {
        stream.forEach(weak: owner, in: owner.bag) { [probe] _, value in
            _ = probe
            calls.append(value)
        }
    }
}
