import TestSupport
import Testing

@testable import Bridges

/// `next()` asks whether the consuming task is cancelled before taking a buffered element: a
/// cancelled consumer gets `nil` even with elements buffered, and those elements are reported
/// undelivered, not lost.
@Suite("CallbackStream: cancellation on the fast path", .timeLimit(.minutes(3)))
struct CallbackStreamCancellationCheckTests {
    /// The check on the fast path: elements buffered, the consumer cancelled between two of them.
    @Test func consumerCancelledWithElementsBuffered_nextReturnsNil_andTheRestIsReportedUndelivered() async {
        let probe = StreamProbe()
        let undelivered = Collected<Int>()
        let reasons = Collected<UndeliveredReason>()
        let stream = CallbackStream<Int, Never>(onUndelivered: { element, reason in
            undelivered.append(element)
            reasons.append(reason)
        }) { sink in
            probe.builds.increment()
            let proxy = ProbeProxy(released: probe.proxyReleased)
            probe.proxy.object = proxy
            for value in 1...5 { sink.yield(value) }  // all buffered before the first element is taken
            sink.finish()
            return Cancellation {
                probe.teardowns.increment()
                _ = proxy
            }
        }
        let received = await Task {
            var received: [Int] = []
            var iterator = stream.makeAsyncIterator()
            while let value = await iterator.next() {
                received.append(value)
                if value == 2 { withUnsafeCurrentTask { $0?.cancel() } }
            }
            return received
        }.value
        #expect(received == [1, 2], "no element after the task was cancelled, although three were buffered")
        #expect(undelivered.values == [3, 4, 5])
        #expect(reasons.values == [.cancelled, .cancelled, .cancelled])
        await probe.proxyReleased.wait()
        #expect(probe.teardowns.value == 1)
        #expect(probe.proxy.object == nil)
    }

    /// The same for a consumer on the main actor, whose `next(isolation:)` is the inlined fast path
    /// with the main actor as its isolation.
    @Test @MainActor func mainActorConsumerCancelledWithElementsBuffered_getsNilNext() async {
        let probe = StreamProbe()
        let box = SinkBox<Int, Never>()
        let stream = CallbackStream<Int, Never>.probed(probe, box: box) { sink in
            for value in 1...3 { sink.yield(value) }
        }
        let received = await Task { @MainActor in
            var received: [Int] = []
            for await value in stream {
                received.append(value)
                withUnsafeCurrentTask { $0?.cancel() }
            }
            return received
        }.value
        #expect(received == [1])
        await probe.tornDown.wait()
        #expect(box.sink.yield(4) == .terminated)
        box.clear()
        await probe.proxyReleased.wait()
        #expect(probe.teardowns.value == 1)
    }
}
