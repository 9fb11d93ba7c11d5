import Bridges
import Dispatch
import TestSupport
import Testing

/// The teardown runs exactly once in each of the five endings, never before the builder ran,
/// and the delegate proxy it captured is released after it.
@Suite("CallbackStream: teardown and lifetime", .timeLimit(.minutes(3)))
struct CallbackStreamTeardownTests {
    @Test func producerFinishes_tearsDownOnce_thenConsumerDrainsBuffer() async {
        let probe = StreamProbe()
        let box = SinkBox<Int, Never>()
        let stream = CallbackStream<Int, Never>.probed(probe, box: box) { sink in sink.yield(1) }
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == 1)
        box.sink.yield(2)
        box.sink.finish()
        #expect(probe.teardowns.value == 1, "finish runs the teardown synchronously")
        #expect(await iterator.next() == 2, "buffered elements survive the teardown")
        #expect(await iterator.next() == nil)
        #expect(await iterator.next() == nil)
        box.clear()
        _ = consume iterator
        await probe.proxyReleased.wait()
        #expect(probe.teardowns.value == 1)
        #expect(probe.proxy.object == nil)
    }

    @Test func producerFails_tearsDownOnce_andTheTypedErrorArrives() async {
        let probe = StreamProbe()
        let stream = CallbackStream<Int, TestError>.probed(probe) { sink in
            sink.yield(1)
            sink.finish(throwing: TestError(code: 7))
        }
        var received: [Int] = []
        do {
            for try await value in stream { received.append(value) }
            Issue.record("expected the producer's error")
        } catch {
            #expect(error == TestError(code: 7))  // `error` is a TestError: typed throws
        }
        #expect(received == [1])
        await probe.proxyReleased.wait()
        #expect(probe.teardowns.value == 1)
    }

    @Test func consumerBreaksOut_tearsDownOnce() async {
        let probe = StreamProbe()
        let box = SinkBox<Int, Never>()
        let stream = CallbackStream<Int, Never>.probed(probe, box: box) { sink in
            for value in 1...5 { sink.yield(value) }
        }
        for await value in stream where value == 2 { break }
        await probe.tornDown.wait()
        await probe.proxyReleased.wait()
        #expect(probe.teardowns.value == 1)
        #expect(box.sink.yield(9) == .terminated, "the producer is told the consumer left")
        #expect(box.sink.isTerminated)
        box.clear()
    }

    @Test func consumerTaskCancelledWhileSuspended_tearsDownOnce_andNextReturnsNil() async {
        let probe = StreamProbe()
        let box = SinkBox<Int, Never>()
        let waiting = Signal()
        let stream = CallbackStream<Int, Never>.probed(probe, box: box, buffering: .rendezvous) { sink in
            sink.onDemand { _ in waiting.open() }  // the consumer is suspended in next()
        }
        let consumer = Task {
            var received: [Int] = []
            for await value in stream { received.append(value) }
            return received
        }
        await waiting.wait()
        consumer.cancel()
        #expect(await consumer.value == [])
        await probe.proxyReleased.wait()
        #expect(probe.teardowns.value == 1)
        #expect(box.sink.yield(1) == .terminated)
        box.sink.finish()  // finishing a stream the consumer ended is not misuse
        box.clear()
    }

    @Test func consumerTaskCancelledBeforeIterating_neverRunsTheBuilder() async {
        let probe = StreamProbe()
        let stream = CallbackStream<Int, Never>.probed(probe)
        let go = Signal()
        let consumer = Task {
            await go.wait()
            var count = 0
            for await _ in stream { count += 1 }
            return count
        }
        consumer.cancel()
        go.open()
        #expect(await consumer.value == 0)
        #expect(probe.builds.value == 0)
        #expect(probe.teardowns.value == 0)
    }

    @Test func iteratorDropped_tearsDownOnce() async {
        let probe = StreamProbe()
        let box = SinkBox<Int, Never>()  // the producer keeps its sink, as a delegate does
        let stream = CallbackStream<Int, Never>.probed(probe, box: box) { sink in sink.yield(1) }
        do {
            var iterator = stream.makeAsyncIterator()
            #expect(await iterator.next() == 1)
        }
        await probe.tornDown.wait()
        await probe.proxyReleased.wait()
        #expect(probe.teardowns.value == 1)
        box.clear()
    }

    @Test func iteratorDroppedBeforeNext_neverRunsBuilderOrTeardown() async {
        let probe = StreamProbe()
        let captured = Signal()
        do {
            let canary = Canary(released: captured)
            let stream = CallbackStream<Int, Never> { _ in
                _ = canary
                probe.builds.increment()
                return Cancellation { probe.teardowns.increment() }
            }
            _ = stream.makeAsyncIterator()
        }
        await captured.wait()  // the builder's captures were released with the stream
        #expect(probe.builds.value == 0)
        #expect(probe.teardowns.value == 0)
    }

    @Test func finishInsideBuilder_runsTeardownWhenBuilderReturns() async {
        let probe = StreamProbe()
        let stream = CallbackStream<Int, Never>.probed(probe) { sink in
            sink.yield(1)
            sink.finish()
            #expect(probe.teardowns.value == 0, "the teardown is not known until the builder returns")
        }
        var received: [Int] = []
        for await value in stream { received.append(value) }
        #expect(received == [1])
        await probe.proxyReleased.wait()
        #expect(probe.teardowns.value == 1)
    }

    @Test func sinkReleasedWithoutFinish_finishesAndReports() async {
        let probe = StreamProbe()
        let (received, diagnostics) = await capturingDiagnostics {
            let stream = CallbackStream<Int, Never> { sink in
                sink.yield(1)
                probe.builds.increment()
                return Cancellation { probe.teardowns.increment() }  // does not keep the sink
            }
            var received: [Int] = []
            for await value in stream { received.append(value) }
            return received
        }
        #expect(received == [1])
        #expect(probe.teardowns.value == 1)
        #expect(diagnostics.map(\.kind) == [.sinkDropped])
    }

    /// Reported once per kind, at the offending call (not where the stream was made, which the
    /// message names), with a message that says what to change.
    @Test func yieldAfterFinish_answersTerminated_andReportsOnce() async {
        let probe = StreamProbe()
        let box = SinkBox<Int, Never>()
        let lines = Collected<UInt>()
        let (_, diagnostics) = await capturingDiagnostics {
            let stream = CallbackStream<Int, Never>.probed(probe, box: box) { sink in
                sink.finish()
                lines.append(#line + 1)  // the next line's
                let first = sink.yield(1)
                #expect(first == .terminated)
                #expect(sink.yield(2) == .terminated)
                lines.append(#line + 1)  // the next line's
                sink.finish()
            }
            for await _ in stream {}
        }
        #expect(diagnostics.map(\.kind) == [.yieldAfterFinish, .finishCalledTwice])  // once per kind
        #expect(diagnostics.first?.occurrences == 2)
        #expect(diagnostics.map(\.fileID) == [#fileID, #fileID])
        #expect(diagnostics.map(\.line) == lines.values)
        // where the stream was made
        #expect(diagnostics.allSatisfy { $0.message.contains("CallbackStreamSupport.swift:") })
        #expect(diagnostics.first?.message.contains("Stop producing once you call finish()") == true)
        #expect(diagnostics.last?.message.contains("Finish once, where the source ends") == true)
        box.clear()
        await probe.proxyReleased.wait()
    }

    @Test func twoConsumersOfOneColdStream_eachGetTheWholeSequence() async {
        let probe = StreamProbe()
        let stream = CallbackStream<Int, Never>.probed(probe) { sink in
            let producer = sink
            DispatchQueue.global().async {
                for value in 0..<1_000 { producer.yield(value) }
                producer.finish()
            }
        }
        async let first = stream.reduce(into: [Int]()) { $0.append($1) }
        async let second = stream.reduce(into: [Int]()) { $0.append($1) }
        let (a, b) = await (first, second)
        #expect(a == Array(0..<1_000))
        #expect(b == Array(0..<1_000))
        #expect(probe.builds.value == 2)
        #expect(probe.teardowns.value == 2)
    }

    @Test func concurrentNextOnOneIterator_reportsAndDoesNotHang() async throws {
        // An iterator is not Sendable; this test smuggles one across tasks on purpose.
        final class Shared: @unchecked Sendable {  // misuse under test: two tasks share the iterator
            var iterator: CallbackStream<Int, Never>.AsyncIterator
            init(_ iterator: CallbackStream<Int, Never>.AsyncIterator) { self.iterator = iterator }
        }
        let probe = StreamProbe()
        let box = SinkBox<Int, Never>()
        let waiting = Signal()
        let (_, diagnostics) = await capturingDiagnostics {
            let stream = CallbackStream<Int, Never>.probed(probe, box: box, buffering: .rendezvous) { sink in
                sink.onDemand { _ in waiting.open() }
            }
            let shared = Shared(stream.makeAsyncIterator())
            let first = Task { await shared.iterator.next() }
            await waiting.wait()
            let second = await Task { await shared.iterator.next() }.value
            #expect(second == nil, "the second concurrent caller gets nil")
            box.sink.yield(5)
            #expect(await first.value == 5)
            box.sink.finish()
            box.clear()
        }
        #expect(diagnostics.map(\.kind) == [.concurrentIteration])
        await probe.proxyReleased.wait()
    }
}
