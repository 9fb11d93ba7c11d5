import Testing

@testable import LogTailer

// A child process (`Process`): macOS and Linux only. iOS, tvOS, watchOS and visionOS have none.
#if os(macOS) || os(Linux)

@Suite("Example: LogTailer", .timeLimit(.minutes(3)))
struct LogTailerTests {
    @Test func linesArriveInOrder_readerPausesForAStalledConsumer_breakTerminatesTheCommand() async throws {
        let report = try await runLogTailer(log: { _ in })
        #expect(report.accessLog == (1...500).map { "GET /movies/\($0) 200" })
        #expect(report.pauses >= 1)
        #expect(report.resumes >= 1)
        #expect(report.failingLines == ["started", "disk full"])
        #expect(report.failure == ProcessFailed(exit: ProcessExit(status: 3, bySignal: false)))
        #expect(report.endlessLines == ["heartbeat 1", "heartbeat 2", "heartbeat 3"])
        #expect(report.endlessExit?.bySignal == true)
        #expect(report.naiveStillRunningAfterBreak)
        #expect(report.adapterLines == ["alpha", "beta", "gamma"])
    }
}

#endif
