import Foundation

// A child process (`Process`): macOS and Linux only. iOS, tvOS, watchOS and visionOS have none.
#if os(macOS) || os(Linux)

// snippet:begin logTailer.before
/// The version most codebases start with: `readabilityHandler` feeding an `AsyncStream`.
///
/// It yields chunks, not lines (a line split across two reads arrives in two pieces), buffers
/// without bound, never reports the exit status, and when the consumer leaves the loop nothing
/// stops the command: it keeps running, writing into a pipe nobody reads.
public func naiveProcessOutput(_ command: String) throws -> (chunks: AsyncStream<String>, process: Process) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    let pipe = Pipe()
    process.standardOutput = pipe
    let chunks = AsyncStream<String> { continuation in
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                continuation.finish()
            } else {
                continuation.yield(String(decoding: data, as: UTF8.self))
            }
        }
    }
    try process.run()
    return (chunks, process)
}
// snippet:end logTailer.before

#endif
