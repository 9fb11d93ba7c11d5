import BridgesTesting
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct RecorderTests {
    @Test func next_takesElementsInOrder_andExpectFinishedSeesTheEnd() async throws {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let recorder = stream.record()
        continuation.yield(1)
        continuation.yield(2)
        #expect(try await recorder.next() == 1)
        #expect(try await recorder.next() == 2)
        await recorder.expectNoMoreElements()
        continuation.yield(3)
        continuation.finish()
        #expect(try await recorder.next() == 3)
        await recorder.expectFinished()
        #expect(recorder.elements == [1, 2, 3])
        #expect(recorder.isFinished)
    }

    @Test func expectFailure_returnsTheSequencesError() async throws {
        let (stream, continuation) = AsyncThrowingStream<Int, any Error>.makeStream()
        let recorder = stream.record()
        continuation.yield(1)
        continuation.finish(throwing: Boom())
        #expect(try await recorder.next() == 1)
        await recorder.expectFailure(Boom())
        #expect(recorder.failure is Boom)
    }

    @Test func next_whenTheSequenceFailed_throwsItsError() async {
        let (stream, continuation) = AsyncThrowingStream<Int, any Error>.makeStream()
        let recorder = stream.record()
        continuation.finish(throwing: Boom())
        await #expect(throws: Boom.self) { try await recorder.next() }
    }

    @Test func next_whenTheSequenceFinished_failsAndThrows() async {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let recorder = stream.record()
        continuation.finish()
        await withKnownIssue {
            _ = try await recorder.next()
        }
    }

    @Test func next_whenNothingArrives_failsAfterItsBoundInsteadOfHanging() async {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let recorder = stream.record(timeout: .zero)
        await withKnownIssue {
            _ = try await recorder.next()
        }
        continuation.finish()
    }

    @Test func expectNoMoreElements_whenAnElementWasNotTaken_fails() async throws {
        try await withSerialTasks {
            let (stream, continuation) = AsyncStream<Int>.makeStream()
            let recorder = stream.record()
            continuation.yield(1)
            continuation.yield(2)
            let first = try await recorder.next()
            #expect(first == 1)
            await runUntilIdle()
            #expect(recorder.pendingElements == [2])
            await withKnownIssue {
                await recorder.expectNoMoreElements()
            }
            continuation.finish()
        }
    }

    @Test func expectNoMoreElements_insideSerialTasks_seesWhatTasksWereAboutToSend() async {
        await withSerialTasks {
            let (stream, continuation) = AsyncStream<Int>.makeStream()
            let recorder = stream.record()
            Task { continuation.yield(1) }  // not yet run: serial, and this task has the turn
            await withKnownIssue {
                await recorder.expectNoMoreElements()  // waits until idle first, so it sees 1
            }
            continuation.finish()
        }
    }

    @Test func expectFinished_whenTheSequenceFailed_fails() async {
        let (stream, continuation) = AsyncThrowingStream<Int, any Error>.makeStream()
        let recorder = stream.record()
        continuation.finish(throwing: Boom())
        await withKnownIssue {
            await recorder.expectFinished()
        }
    }

    @Test func expectFailure_whenTheSequenceFinished_fails() async {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let recorder = stream.record()
        continuation.finish()
        await withKnownIssue {
            await recorder.expectFailure()
        }
    }

    @Test func releasingTheRecorder_cancelsTheIteration() async {
        let terminated = ProcessingChannel<Void>()
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        continuation.onTermination = { _ in Task { try await terminated.send(()) } }
        let tracker = LeakTracker()
        var recorder: Recorder<Int>? = stream.record()
        tracker.track(recorder!)
        recorder = nil
        #expect(tracker.aliveObjects.isEmpty)  // the recording task does not keep the recorder alive
        for await _ in terminated { break }  // the stream was terminated: the iteration stopped
    }
}
