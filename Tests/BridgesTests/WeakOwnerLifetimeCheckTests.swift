import TestSupport
import Testing

@testable import Bridges

/// A sequence whose `next()` ignores cancellation: it returns only when `release` opens.
struct StubbornSequence: AsyncSequence, Sendable {
    let release: Gate
    struct AsyncIterator: AsyncIteratorProtocol {
        let release: Gate
        mutating func next() async -> Int? {
            await release.wait()
            return nil
        }
    }
    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(release: release) }
}

/// A grace period that ends when the test says so (virtual time without a clock).
func gatedGrace(_ gate: Gate) -> BridgeTimeout {
    .custom("the test's grace period") { await gate.wait() }
}

@Suite("OwnerLifetimeCheck", .timeLimit(.minutes(3)))
struct WeakOwnerLifetimeCheckTests {
    @Test func bagNotOwnedByOwner_elementAfterOwnerDeath_isReported() async {
        let source = TrackedStream(Int.self)
        let diagnostics = Collected<BridgeDiagnostic>()
        let deinitGate = Gate()
        let taskEnded = Gate()
        let calls = Collected<Int>()
        let foreignBag = CancellationBag()  // a mistake: not the owner's own bag
        var owner: PlainOwner? = PlainOwner(deinitGate: deinitGate)
        Diagnostics.withHandler({ diagnostics.append($0) }) {
            source.stream.forEach(weak: owner!, in: foreignBag, lifetimeCheck: .after(gatedGrace(Gate()))) {
                [probe = DeinitSignal(taskEnded)] _, value in
                _ = probe
                calls.append(value)
            }
        }
        owner = nil
        await deinitGate.wait()
        source.continuation.yield(1)  // finds the owner gone: the loop ends, and says why
        await diagnostics.wait(count: 1)
        await taskEnded.wait()
        #expect(calls.count == 0)
        #expect(diagnostics.values.map(\.kind) == [.ownerLifetime])
        #expect(diagnostics.values.first?.message.contains("PlainOwner") == true)
        #expect(diagnostics.values.first?.fileID == #fileID)
        #expect(foreignBag.isEmpty)
    }

    @Test func sameMistake_withCheckOff_endsSilently() async {
        let source = TrackedStream(Int.self)
        let diagnostics = Collected<BridgeDiagnostic>()
        let deinitGate = Gate()
        let taskEnded = Gate()
        let foreignBag = CancellationBag()
        var owner: PlainOwner? = PlainOwner(deinitGate: deinitGate)
        Diagnostics.withHandler({ diagnostics.append($0) }) {
            source.stream.forEach(weak: owner!, in: foreignBag, lifetimeCheck: .off) {
                [probe = DeinitSignal(taskEnded)] _, _ in
                _ = probe
            }
        }
        owner = nil
        await deinitGate.wait()
        source.continuation.yield(1)
        await taskEnded.wait()  // the report would have been made before the task ended
        #expect(diagnostics.count == 0)
    }

    @Test func sequenceIgnoringCancellation_stillRunningAfterGrace_isReported() async {
        let release = Gate()
        let grace = Gate()
        let diagnostics = Collected<BridgeDiagnostic>()
        let deinitGate = Gate()
        let taskEnded = Gate()
        var owner: PlainOwner? = PlainOwner(deinitGate: deinitGate)
        Diagnostics.withHandler({ diagnostics.append($0) }) {
            StubbornSequence(release: release).forEach(
                weak: owner!, in: owner!.bag, lifetimeCheck: .after(gatedGrace(grace))
            ) {
                [probe = DeinitSignal(taskEnded)] _, _ in
                _ = probe
            }
        }
        owner = nil  // the bag cancels the task, but next() does not return
        await deinitGate.wait()
        grace.open()
        await diagnostics.wait(count: 1)
        #expect(diagnostics.values.map(\.kind) == [.ownerLifetime])
        #expect(diagnostics.values.first?.message.contains("ignores task cancellation") == true)
        release.open()
        await taskEnded.wait()
    }

    @Test func expectRelease_reportsAnOwnerKeptAliveByItsOwnTask_andPassesTheFix() async {
        let diagnostics = Collected<BridgeDiagnostic>()

        // The leak: the naive task holds its owner for as long as the stream runs.
        let source = TrackedStream(Int.self)
        let naiveGone = Gate()
        var naive: NaiveOwner? = NaiveOwner(listeningTo: source.stream, deinitGate: naiveGone)
        let grace = Gate()
        let check = Diagnostics.withHandler({ diagnostics.append($0) }) {
            OwnerLifetimeCheck.expectRelease(of: naive!, within: gatedGrace(grace))
        }
        naive = nil
        grace.open()
        #expect(await check.value == false)
        #expect(diagnostics.values.map(\.kind) == [.ownerLifetime])
        #expect(diagnostics.values.first?.message.contains("NaiveOwner") == true)
        source.continuation.finish()  // only the end of the stream frees it
        await naiveGone.wait()

        // The fix: forEach(weak:in:) lets it go at once.
        let fixedSource = TrackedStream(Int.self)
        let fixedGone = Gate()
        var fixed: PlainOwner? = PlainOwner(deinitGate: fixedGone)
        fixedSource.stream.forEach(weak: fixed!, in: fixed!.bag) { _, _ in }
        let fixedGrace = Gate()
        let fixedCheck = Diagnostics.withHandler({ diagnostics.append($0) }) {
            OwnerLifetimeCheck.expectRelease(of: fixed!, within: gatedGrace(fixedGrace))
        }
        fixed = nil
        await fixedGone.wait()
        await fixedSource.tornDown.wait()
        fixedGrace.open()
        #expect(await fixedCheck.value == true)
        #expect(diagnostics.count == 1, "no report for an owner that was released")
    }
}
