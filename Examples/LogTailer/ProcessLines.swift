import Bridges
import ExampleSupport
import Foundation

// A child process (`Process`): macOS and Linux only. iOS, tvOS, watchOS and visionOS have none.
#if os(macOS) || os(Linux)

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
/// Backpressure: Bridges' `FileHandle.readLines(buffering:)` stops reading while its own
/// buffer is full, so the pipe fills up and the command blocks in `write`. The pump forwards
/// its lines into this stream and pauses through a `DemandGate` when the consumer's buffer is
/// full (`events.onPause`), resuming when the consumer makes room (`events.onResume`): a fast
/// command never outruns the consumer by more than `n` lines plus one read. Under
/// `.unbounded` nothing pauses and nothing is lost: memory holds what the consumer has not
/// read yet (fine for a command that ends; not for `tail -f` on a busy log).
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
        let exit = ExitStatus()
        process.terminationHandler = { process in
            let status = ProcessExit(status: process.terminationStatus, bySignal: process.terminationReason == .uncaughtSignal)
            events.onExit(status)
            exit.resolve(status)
        }
        do {
            try process.run()
        } catch {
            sink.finish(throwing: error)
            return Cancellation()
        }
        let (resumed, resume) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let gate = DemandGate(pause: events.onPause, resume: { events.onResume(); resume.yield() })
        sink.onDemand { gate.add($0) }                     // the room in the consumer's buffer
        let lines = pipe.fileHandleForReading.readLines(buffering: .suspending(1))
        let pump = Task {
            for await line in lines {
                let room = gate.spend()                              // spend first, then yield
                if case .terminated = sink.yield(line) { return }    // the consumer left
                if !room {                                           // out of room: wait for it
                    for await _ in resumed { break }
                    if Task.isCancelled { return }
                }
            }
            guard let status = await exit.value else { return }      // output drained: how did it end?
            if status.status == 0, !status.bySignal {
                sink.finish()
            } else {
                sink.finish(throwing: ProcessFailed(exit: status))
            }
        }
        return Cancellation {            // runs once: finished, failed, break, or cancelled
            gate.stop()
            pump.cancel()
            // SIGKILL, not `terminate()`: on Linux the child inherits the signal mask of the
            // thread that launched it, and a concurrency or dispatch worker blocks SIGTERM.
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }
}
// snippet:end logTailer.after

/// A child's exit status, set once by its termination handler and awaited by the pump.
final class ExitStatus: Sendable {
    private let status = ExampleBox<ProcessExit?>(nil)
    private let set = ExampleSignal()

    func resolve(_ exit: ProcessExit) {
        status.value = exit
        set.open()
    }

    /// The exit status; nil when the waiting task was cancelled first.
    var value: ProcessExit? {
        get async {
            await set.wait()
            return status.value
        }
    }
}

#endif
