import Bridges
import ExampleSupport
import Foundation

/// How a child process ended.
public struct ProcessExit: Sendable, Equatable, CustomStringConvertible {
    public var status: Int32
    /// `true` when a signal ended it (`status` is then the signal number).
    public var bySignal: Bool
    public var description: String { bySignal ? "killed by signal \(status)" : "exit \(status)" }
}

/// The child exited with a non-zero status: thrown by ``processLines(_:buffering:events:)``
/// after every line it wrote has been delivered.
public struct ProcessFailed: Error, Equatable { public var exit: ProcessExit }

/// What happened inside the bridge, for logging (and for this example's report).
public struct TailEvents: Sendable {
    public var onPause: @Sendable () -> Void = {}
    public var onResume: @Sendable () -> Void = {}
    public var onExit: @Sendable (ProcessExit) -> Void = { _ in }
    public init() {}
}

// snippet:begin logTailer.after
/// The lines a shell command writes to stdout, as an `AsyncSequence`.
///
/// Cold: the command starts when a consumer starts iterating, once per iteration. The sequence
/// finishes when the command has exited *and* its output is drained; a non-zero exit throws
/// ``ProcessFailed`` after the last line. Leaving the loop early (`break`, task cancelled)
/// stops reading and terminates the command.
///
/// Backpressure: `FileHandle.readabilityHandler` hands over chunks, not lines, and cannot be
/// asked for less. Under a waiting policy (`.suspending(n)`) the reader counts the demand that
/// `sink.onDemand` reports (n at first, then one per line taken) against the lines it yielded;
/// out of credit, its handler waits before reading the next chunk: the pipe fills up and the
/// command blocks in `write`, so a fast producer never outruns the consumer by more than `n`
/// lines plus one chunk. Under `.unbounded`
/// `yield` never answers `.stopProducing`: nothing is lost, and memory holds what the
/// consumer has not read yet (fine for a command that ends; not for `tail -f` on a busy log).
public func processLines(
    _ command: String,
    buffering: BufferingPolicy = .suspending(64),
    events: TailEvents = TailEvents()
) -> CallbackStream<String, any Error> {
    CallbackStream(buffering: buffering) { sink in
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let pipe = Pipe()
        process.standardOutput = pipe
        let reader = PipeLineReader(pipe.fileHandleForReading, sink: sink, events: events)
        process.terminationHandler = { process in
            let exit = ProcessExit(status: process.terminationStatus, bySignal: process.terminationReason == .uncaughtSignal)
            events.onExit(exit)
            reader.processExited(exit)
        }
        sink.onDemand { count in reader.demandArrived(count) }
        do {
            try process.run()
        } catch {
            sink.finish(throwing: error)
            return Cancellation()
        }
        reader.start()
        return Cancellation {            // runs once: finished, failed, break, or cancelled
            reader.stop()
            // SIGKILL, not `terminate()`: on Linux the child inherits the signal mask of the
            // thread that launched it, and a concurrency or dispatch worker blocks SIGTERM.
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }
}
// snippet:end logTailer.after

/// Splits chunks from a pipe into lines, blocks while the consumer has no room
/// (``BlockingDemandGate``), and finishes the stream once the output is drained and the process has
/// exited.
///
/// Reading happens in ``pump()``, one pump at a time (`pumpLock`): from the readability handler
/// when data arrives, and once more when the process exits. The second trigger is needed on
/// Linux, where the dispatch source under `readabilityHandler` may report the pipe's end of
/// file together with the last data and never again, so a reader waiting for an empty chunk
/// would wait forever. Once the process has exited, the write end is closed and reading to the
/// end cannot block.
final class PipeLineReader: @unchecked Sendable {  // `pending` is guarded by `pumpLock`, the rest by `lock`
    private let handle: FileHandle
    private let sink: CallbackStream<String, any Error>.Sink
    private let gate: BlockingDemandGate
    private let pumpLock = NSLock()
    private var pending = Data()              // a partial line waiting for its "\n"
    private let lock = NSLock()
    private var endOfFile = false
    private var exit: ProcessExit?
    private var finished = false

    init(_ handle: FileHandle, sink: CallbackStream<String, any Error>.Sink, events: TailEvents) {
        self.handle = handle
        self.sink = sink
        self.gate = BlockingDemandGate(onPause: events.onPause, onResume: events.onResume)
    }

    func start() { handle.readabilityHandler = { [self] _ in pump() } }

    func stop() {
        gate.stop()
        handle.readabilityHandler = nil
    }

    /// The consumer can take `count` more lines (at first the room in the buffer, then one per
    /// line taken).
    func demandArrived(_ count: Int) { gate.add(count) }

    func processExited(_ exit: ProcessExit) {
        lock.withLock { self.exit = exit }
        DispatchQueue.global().async { [self] in pump() }
    }

    /// Reads what is available (everything up to the end, once the process has exited), yields
    /// it line by line, and waits for credit after each chunk. While it waits nothing is read:
    /// the pipe fills up and the command blocks in `write`.
    private func pump() {
        pumpLock.lock()
        defer { pumpLock.unlock() }
        while !gate.isStopped {
            let (atEnd, exited) = lock.withLock { (endOfFile, exit != nil) }
            if atEnd { break }
            let chunk = handle.availableData
            if chunk.isEmpty {                    // end of file: the writer closed the pipe
                handle.readabilityHandler = nil
                if !pending.isEmpty { sink.yield(String(decoding: pending, as: UTF8.self)) }
                pending = Data()
                lock.withLock { endOfFile = true }
                break
            }
            pending.append(chunk)
            var lines: [String] = []
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                pending.removeSubrange(pending.startIndex...newline)
            }
            gate.spend(lines.count)               // a chunk cannot be unread: all its lines go in
            for line in lines {
                if case .terminated = sink.yield(line) { return }   // the consumer left; the teardown stops us
            }
            gate.waitForCredit()
            if !exited { break }                  // the handler is called again for more data
        }
        finishIfDone()
    }

    private func finishIfDone() {
        let exit: ProcessExit? = lock.withLock {
            guard endOfFile, !finished, let exit = self.exit else { return nil }
            finished = true
            return exit
        }
        guard let exit else { return }
        if exit.status == 0, !exit.bySignal {
            sink.finish()
        } else {
            sink.finish(throwing: ProcessFailed(exit: exit))
        }
    }
}
