import Bridges
import Dispatch
import Foundation
import TestSupport
import Testing

/// A consumer's cancellation never waits, inside the task's cancellation handler, for something
/// that needs the cancelled task to make progress. A teardown that waits for its producer thread
/// (as the FileHandle reader's does) runs in the consumer's task once it has been resumed, not
/// in the handler: `Task.cancel()` returns at once, whatever the producer is doing.
/// Runs `body` on a thread of its own. The producers and writers here spin until told to stop:
/// on Dispatch's global queue they would hold its few workers (as many as cores) and starve
/// every other test that dispatches there while the suite runs in parallel.
private func onOwnThread(_ body: @escaping @Sendable () -> Void) {
    Thread { body() }.start()
}

@Suite("Cancellation never blocks the canceller", .timeLimit(.minutes(3)))
struct CancellationNeverBlocksTests {
    /// Rounds of "cancel a consumer suspended in next() while its producer thread yields" (a
    /// handler that waited would hang within a few hundred). The release-mode soak (`BridgesSoak`,
    /// "CallbackStream cancel while waiting") runs 100 000.
    static let rounds = 1_000

    /// A stream whose producer is a thread of its own that yields until it is told to stop, and
    /// whose teardown stops it and *waits* for it to leave: the shape of the FileHandle reader.
    static func producerThreadStream(exited: Counter) -> CallbackStream<Int, Never> {
        CallbackStream<Int, Never>(buffering: .latest) { sink in
            let stop = LegacyFlagForTests()
            let gone = DispatchSemaphore(value: 0)
            onOwnThread {
                var value = 0
                while !stop.isSet {
                    if case .terminated = sink.yield(value) { break }
                    value += 1
                    // A few hundred instructions between yields: the consumer drains the buffer
                    // and suspends, so most cancellations find it waiting in next().
                    var spin = 0
                    for i in 0..<50 { spin &+= i }
                    withExtendedLifetime(spin) {}
                }
                exited.increment()
                gone.signal()
            }
            return Cancellation {
                stop.set()
                gone.wait()  // the teardown waits for the producer thread, as FileHandle's does
            }
        }
    }

    @Test func teardownThatWaitsForItsProducerThread_cancelWhileTheConsumerWaits_neverDeadlocks() async {
        let exited = Counter()
        for round in 0..<Self.rounds {
            let started = Signal()
            let stream = Self.producerThreadStream(exited: exited)
            let consumer = Task {
                var count = 0
                for await _ in stream {
                    count += 1
                    if count == 1 { started.open() }
                }
                return count
            }
            await started.wait()
            let cancelReturned = Signal()
            onOwnThread {
                consumer.cancel()  // hung here: the handler waited for a thread that waited for this task
                cancelReturned.open()
            }
            await cancelReturned.wait()
            #expect(await consumer.value >= 1)
            // The loop ended after its teardown returned: the producer thread had left.
            #expect(exited.value == round + 1, "round \(round): the loop ended before its teardown returned")
        }
    }

    @Test func readChunks_cancelWhileTheConsumerWaits_neverDeadlocks_andTheReaderIsGone() async throws {
        for round in 0..<(Self.rounds / 4) {
            let pipe = Pipe()
            let reader = pipe.fileHandleForReading
            let writer = pipe.fileHandleForWriting
            let descriptor = reader.fileDescriptor
            let writeEnd = writer.fileDescriptor
            _ = fcntl(writeEnd, F_SETFL, O_NONBLOCK)  // a full pipe makes the writer spin, never block
            let stopWriting = LegacyFlagForTests()
            let writerGone = Signal()
            onOwnThread {
                // Small writes, one after another: the reader thread yields chunk after chunk
                // while the consumer is cancelled.
                var bytes = [UInt8](repeating: 1, count: 16)
                while !stopWriting.isSet { _ = write(writeEnd, &bytes, bytes.count) }
                writerGone.open()
            }
            let started = Signal()
            let consumer = Task {
                var chunks = 0
                for await _ in reader.readChunks(buffering: .latest) {
                    chunks += 1
                    if chunks == 1 { started.open() }
                }
                return chunks
            }
            await started.wait()
            let cancelReturned = Signal()
            onOwnThread {
                consumer.cancel()
                cancelReturned.open()
            }
            await cancelReturned.wait()
            #expect(await consumer.value >= 1)
            #expect(!_ReadingDescriptors.isReading(descriptor), "round \(round): the reader outlived the loop")
            stopWriting.set()
            await writerGone.wait()
            try writer.close()
            try reader.close()
        }
    }
}
