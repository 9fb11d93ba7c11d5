import Foundation

// `swift run LogTailer`: a subprocess's output consumed line by line with `for try await`.
#if os(macOS) || os(Linux)
let report = try await runLogTailer()
let ok = report.accessLog == (1...500).map { "GET /movies/\($0) 200" }
    && report.pauses >= 1 && report.resumes >= 1
    && report.failingLines == ["started", "disk full"]
    && report.failure == ProcessFailed(exit: ProcessExit(status: 3, bySignal: false))
    && report.endlessLines == ["heartbeat 1", "heartbeat 2", "heartbeat 3"]
    && report.endlessExit?.bySignal == true
    && report.naiveStillRunningAfterBreak
    && report.adapterLines == ["alpha", "beta", "gamma"]
print(ok ? "LogTailer: OK" : "LogTailer: FAILED \(report)")
exit(ok ? 0 : 1)
#else
print("LogTailer: skipped, it runs shell commands (Process), which this platform does not have")
#endif
