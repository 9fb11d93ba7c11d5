#if canImport(Foundation)
import Foundation

extension FileHandle {
    /// The data that becomes readable on this handle (a pipe, a socket, a file) as a stream of
    /// chunks; finishes at end of file.
    ///
    /// <!-- snippet: body — in a method of a `@MainActor` view model with a `pipe` -->
    /// ```swift
    /// for await chunk in pipe.fileHandleForReading.readChunks(buffering: .suspending(4)) {
    ///     await upload(chunk)      // reading pauses while four chunks wait
    /// }
    /// ```
    ///
    /// A reader thread of its own starts when iteration starts and ends at teardown, before the
    /// loop ends; it reads with `poll`/`read`, never through `readabilityHandler` (whose dispatch
    /// source corrupts libdispatch on Linux when torn down while other sources come and go,
    /// swift-corelibs-libdispatch#949).
    ///
    /// - Backpressure: under a waiting policy (`.suspending(n)`, `.watermark`, `.rendezvous`)
    ///   reading stops when the buffer is full and resumes when the consumer makes room, so a
    ///   fast writer is held back by the pipe, not buffered without bound. One read (at most
    ///   64 KiB) is one chunk. Lossy policies and `.unbounded` read as fast as data comes.
    /// - One loop per handle: a second loop started while one is reading the same file
    ///   descriptor (or while a `readabilityHandler` is installed) would split the data between
    ///   them; it is reported as `.fileHandleAlreadyRead` and ends at once, and the first loop is
    ///   not disturbed. Fan out with ``Broadcast`` instead.
    /// - Closing: the stream keeps the handle alive while it reads; close the handle after the
    ///   loop ended (or cancel the loop). A read error is reported as `.fileHandleReadFailed`
    ///   and ends the stream.
    /// - Cost: one thread and one wake-up pipe per running loop, for pipes, sockets, terminals
    ///   and regular files alike. For thousands of descriptors at once, use an event loop
    ///   (SwiftNIO) instead.
    public func readChunks(
        buffering: BufferingPolicy = .unbounded,
        fileID: String = #fileID,
        line: UInt = #line
    ) -> CallbackStream<Data, Never> {
        let handle = Handoff(self)  // moved to the reader thread, which alone reads through it
        let site = CallSite(fileID: fileID, line: line)
        return CallbackStream.synchronous(buffering: buffering, fileID: fileID, line: line) { sink in
            _FileHandleReader.start(handle, sink: sink, site: site) { chunk in chunk.map { [$0] } ?? [] }
        }
    }

    /// The lines (split on `\n`, without the terminator; a final line without one is included)
    /// that become readable on this handle, decoded as UTF-8. Backpressure, one loop per handle
    /// and closing as for ``readChunks(buffering:fileID:line:)``; under a waiting policy the
    /// reader runs at most one read's lines ahead of the room in the buffer.
    public func readLines(
        buffering: BufferingPolicy = .unbounded,
        fileID: String = #fileID,
        line: UInt = #line
    ) -> CallbackStream<String, Never> {
        let handle = Handoff(self)
        let site = CallSite(fileID: fileID, line: line)
        return CallbackStream.synchronous(buffering: buffering, fileID: fileID, line: line) { sink in
            let splitter = LineSplitter()
            return _FileHandleReader.start(handle, sink: sink, site: site) { chunk in
                splitter.feed(chunk ?? Data())  // nil: end of file, which flushes the last line
            }
        }
    }
}
#endif
