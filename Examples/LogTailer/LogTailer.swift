import Bridges
import ExampleSupport
import Foundation

// A child process (`Process`): macOS and Linux only. iOS, tvOS, watchOS and visionOS have none.
#if os(macOS) || os(Linux)

/// What a run of the example observed: checked by `main` and by ExamplesTests.
public struct LogTailerReport: Sendable {
    /// Lines of a command that prints 500 log lines and exits 0, read by a consumer that
    /// stalls after the first line until the reader has paused.
    public var accessLog: [String]
    public var pauses: Int
    public var resumes: Int
    /// A command that exits 3 after two lines: both lines arrive, then `ProcessFailed`.
    public var failingLines: [String]
    public var failure: ProcessFailed?
    /// An endless `tail -f`-like command, left after three lines: how it ended.
    public var endlessLines: [String]
    public var endlessExit: ProcessExit?
    /// The naive `AsyncStream` version, left after its first chunk: is the command still running?
    public var naiveStillRunningAfterBreak: Bool
    /// Bridges' own `FileHandle.readLines()` on a pipe: lines up to end of file, nothing more.
    public var adapterLines: [String]
}

let accessLogCommand = #"i=1; while [ $i -le 500 ]; do echo "GET /movies/$i 200"; i=$((i+1)); done"#
let endlessCommand = #"i=0; while :; do i=$((i+1)); echo "heartbeat $i"; done"#

public func runLogTailer(log: @Sendable (String) -> Void = { print($0) }) async throws -> LogTailerReport {
    // 1. Backpressure: a consumer that stalls. The reader pauses (the command blocks in write)
    //    instead of buffering all 500 lines, and resumes when the consumer takes lines again.
    let pauses = ExampleBox(0), resumes = ExampleBox(0)
    let firstPause = ExampleSignal()
    var events = TailEvents()
    events.onPause = { pauses.value += 1; firstPause.open() }
    events.onResume = { resumes.value += 1 }
    var accessLog: [String] = []
    var iterator = processLines(accessLogCommand, buffering: .suspending(16), events: events).makeAsyncIterator()
    if let first = try await iterator.next() { accessLog.append(first) }
    await firstPause.wait()                         // the consumer is "busy"; the reader must pause
    while let line = try await iterator.next() { accessLog.append(line) }
    log("access log: \(accessLog.count) lines, last \(accessLog.last ?? "-"); reader paused \(pauses.value)×, resumed \(resumes.value)×")

    // 2. A failing command: every line it wrote is delivered before the failure.
    var failingLines: [String] = []
    var failure: ProcessFailed?
    do {
        for try await line in processLines("echo started; echo 'disk full'; exit 3", buffering: .unbounded) {
            failingLines.append(line)
        }
    } catch let error as ProcessFailed {
        failure = error
    }
    log("failing command: \(failingLines) then \(failure.map { "\($0.exit)" } ?? "no error")")

    // 3. Leaving the loop early terminates an endless command (the teardown runs on `break`).
    let endlessExit = ExampleBox<ProcessExit?>(nil)
    let exited = ExampleSignal()
    var endlessEvents = TailEvents()
    endlessEvents.onExit = { endlessExit.value = $0; exited.open() }
    var endlessLines: [String] = []
    for try await line in processLines(endlessCommand, buffering: .suspending(8), events: endlessEvents) {
        endlessLines.append(line)
        if endlessLines.count == 3 { break }
    }
    await exited.wait()
    log("endless command: \(endlessLines), then \(endlessExit.value.map { "\($0)" } ?? "still running")")

    // 4. The naive version: after `break`, the command is still running.
    let (chunks, process) = try naiveProcessOutput(endlessCommand)
    for await _ in chunks { break }
    let naiveStillRunning = process.isRunning
    (process.standardOutput as? Pipe)?.fileHandleForReading.readabilityHandler = nil
    kill(process.processIdentifier, SIGKILL)         // clean up what the naive version left behind
    process.waitUntilExit()
    log("naive AsyncStream version after break: command still running = \(naiveStillRunning)")

    // 5. When you need neither backpressure nor the exit status: Bridges' `readLines()`.
    let process5 = Process()
    process5.executableURL = URL(fileURLWithPath: "/bin/sh")
    process5.arguments = ["-c", "printf 'alpha\\nbeta\\ngamma'"]
    let pipe = Pipe()
    process5.standardOutput = pipe
    try process5.run()
    var adapterLines: [String] = []
    for await line in pipe.fileHandleForReading.readLines() { adapterLines.append(line) }
    process5.waitUntilExit()
    log("FileHandle.readLines(): \(adapterLines)")

    return LogTailerReport(
        accessLog: accessLog, pauses: pauses.value, resumes: resumes.value,
        failingLines: failingLines, failure: failure,
        endlessLines: endlessLines, endlessExit: endlessExit.value,
        naiveStillRunningAfterBreak: naiveStillRunning, adapterLines: adapterLines
    )
}

#endif
