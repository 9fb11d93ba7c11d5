import Bridges
import BridgesTesting
import Dispatch
import Foundation
import Testing

@Suite("FileHandle streams: backpressure and one loop per handle")
struct FileHandleStreamTests {
    /// Two loops over one pipe used to break each other (0 and 20 000 lines, or 0 and 0 with
    /// the data left unread): each teardown removed the other's handler.
    @Test(.timeLimit(.minutes(1)))
    func twoReadLinesLoopsOnOnePipe_theSecondIsReportedAndEnds_theFirstGetsEverything() async throws {
        let pipe = Pipe()
        let reader = pipe.fileHandleForReading
        let writer = pipe.fileHandleForWriting
        let total = 20_000
        let firstStarted = Signal()
        let first = Task { () -> Int in
            var count = 0
            for await _ in reader.readLines() {
                if count == 0 { firstStarted.open() }
                count += 1
            }
            return count
        }
        writer.write(Data("0\n".utf8))
        await firstStarted.wait()  // the first loop is reading
        let (secondCount, diagnostics) = await capturingDiagnostics {
            var count = 0
            for await _ in reader.readLines() { count += 1 }
            return count
        }
        #expect(secondCount == 0)
        #expect(diagnostics.map(\.kind) == [.other("fileHandleAlreadyRead")])
        DispatchQueue.global().async {
            for line in 1..<total { writer.write(Data("\(line)\n".utf8)) }
            try? writer.close()
        }
        #expect(await first.value == total, "the second loop's end did not take the first one's handler")
    }

    /// Under a waiting policy the reader stops reading while the consumer is behind, so the
    /// writer waits on the full pipe: it can never be more than the pipe plus a few chunks ahead.
    @Test(.timeLimit(.minutes(1)))
    func readChunks_suspending1_slowConsumer_writerNeverFarAhead() async throws {
        let pipe = Pipe()
        let writer = pipe.fileHandleForWriting
        let written = Counter()
        let block = 4_096
        let total = 1_024 * block  // 4 MiB
        let consumer = Task { () -> (Int, Int) in
            var taken = 0
            var worstLead = 0
            for await chunk in pipe.fileHandleForReading.readChunks(buffering: .suspending(1)) {
                taken += chunk.count
                worstLead = max(worstLead, written.value * block - taken)
                var checksum = 0  // a slow consumer: work proportional to the chunk
                for _ in 0..<20 { for byte in chunk { checksum &+= Int(byte) } }
                if checksum == -1 { print(checksum) }
            }
            return (taken, worstLead)
        }
        DispatchQueue.global().async {
            let data = Data(repeating: 7, count: block)
            for _ in 0..<(total / block) {
                writer.write(data)
                written.increment()
            }
            try? writer.close()
        }
        let (taken, worstLead) = await consumer.value
        #expect(taken == total, "nothing lost")
        // Pipe (64 KiB on Linux) + the buffered chunk + the chunk read when the buffer filled +
        // the one being taken; without pausing the reader drains the pipe as fast as the writer
        // fills it and the lead grows toward the whole 4 MiB.
        #expect(worstLead <= 320 * 1_024, "the writer ran \(worstLead) bytes ahead of a .suspending(1) consumer")
    }

    @Test func readLines_afterTheWriterClosed_stillEnds() async throws {
        let pipe = Pipe()
        pipe.fileHandleForWriting.write(Data("a\nb".utf8))
        try pipe.fileHandleForWriting.close()  // hung up before the loop installs its handler
        var lines: [String] = []
        for await line in pipe.fileHandleForReading.readLines(buffering: .suspending(1)) { lines.append(line) }
        #expect(lines == ["a", "b"])
    }
}
