import Bridges
import BridgesTesting
import TestSupport
import Testing

/// The operators' forms for OS versions without `AsyncSequence.Failure` (below macOS 15 / iOS 18),
/// whose streams fail with `any Error`. On Linux every form is available; a result type of
/// `any Error` selects these, as the missing typed forms do on an older OS.
@Suite(.timeLimit(.minutes(3))) struct OperatorUntypedFormsTests {
    @available(BridgesClock, *)
    @Test func debounce_untyped_emitsAfterTheWindow_andFailsWithTheUpstreamsError() async throws {
        let clock = TestClock()
        let probe = StreamProbe()
        let box = SinkBox<Int, Boom>()
        try await withSerialTasks { () async throws in
            let debounced: CallbackStream<Int, any Error> = CallbackStream<Int, Boom>.probed(probe, box: box)
                .debounce(for: .milliseconds(300), clock: clock, buffering: .unbounded)
            let output = debounced.record()
            await box.ready.wait()
            box.sink.yield(1)
            box.sink.yield(2)
            await clock.advance(by: .milliseconds(299))
            await output.expectNoMoreElements()
            await clock.advance(by: .milliseconds(1))
            #expect(try await output.next() == 2)
            box.sink.yield(3)  // pending when the upstream fails: dropped
            box.sink.finish(throwing: Boom())
            box.clear()
            await output.expectFailure(Boom())
            #expect(output.elements == [2])
            await clock.expectNoPendingSleepers()
        }
        #expect(probe.teardowns.value == 1)
        await probe.proxyReleased.wait()
    }

    @Test func mapLatest_nonThrowingTransform_throughTheUntypedForm() async throws {
        let probe = StreamProbe()
        let box = SinkBox<Int, Boom>()
        let mapped: CallbackStream<String, any Error> = CallbackStream<Int, Boom>.probed(probe, box: box)
            .mapLatest { value in "#\(value)" }
        let received = Task {
            var received: [String] = []
            do {
                for try await value in mapped { received.append(value) }
                return (received, nil as (any Error)?)
            } catch {
                return (received, error)
            }
        }
        await box.ready.wait()
        box.sink.yield(1)
        box.sink.finish(throwing: Boom())
        box.clear()
        let (values, failure) = await received.value
        // "#1" is dropped if the failure ends the stream first
        #expect(values.allSatisfy { $0 == "#1" } && values.count <= 1)
        #expect(failure as? Boom == Boom())
        await probe.tornDown.wait()
        #expect(probe.teardowns.value == 1)
        await probe.proxyReleased.wait()
    }

    @Test func collectLatest_nonThrowingAction_throughTheUntypedForm_rethrowsTheUpstreamsFailure() async throws {
        let probe = StreamProbe()
        let box = SinkBox<Int, Boom>()
        let seen = Collected<Int>()
        let action: @Sendable (Int) async throws -> Void = { value in seen.append(value) }  // throws nothing
        let loop = Task {
            try await CallbackStream<Int, Boom>.probed(probe, box: box).collectLatest(action)
        }
        await box.ready.wait()
        box.sink.yield(1)
        box.sink.finish(throwing: Boom())
        box.clear()
        await #expect(throws: Boom.self) { try await loop.value }
        #expect(seen.values.allSatisfy { $0 == 1 })
        await probe.tornDown.wait()
        #expect(probe.teardowns.value == 1)
        await probe.proxyReleased.wait()
    }
}
