#if canImport(Foundation)
import Foundation

extension FileHandle {
    /// The data that becomes readable on this handle (a pipe, a socket, a file) as a stream of
    /// chunks, through `readabilityHandler`; finishes at end of file.
    ///
    /// The handler is installed when iteration starts and removed at teardown. Chunks arrive on
    /// Foundation's reading thread. Under a waiting policy nothing is lost: chunks are enqueued.
    public func readChunks(
        buffering: BufferingPolicy = .unbounded,
        fileID: String = #fileID,
        line: UInt = #line
    ) -> CallbackStream<Data, Never> {
        let handle = UncheckedBox(self)
        return CallbackStream(buffering: buffering, fileID: fileID, line: line) { sink in
            let ended = _EndOnce()
            handle.value.readabilityHandler = { readable in
                guard !ended.isEnded else { return }  // a call already queued when the handler was unset
                let (chunks, atEnd) = _readAvailable(readable)
                for chunk in chunks {
                    if case .terminated = sink.yield(chunk) {
                        readable.readabilityHandler = nil
                        return
                    }
                }
                if atEnd, ended.end() {
                    readable.readabilityHandler = nil
                    sink.finish()
                }
            }
            return Cancellation { handle.value.readabilityHandler = nil }
        }
    }

    /// The lines (split on `\n`, without the terminator; a final line without one is included)
    /// that become readable on this handle, decoded as UTF-8. See ``readChunks(buffering:fileID:line:)``.
    public func readLines(
        buffering: BufferingPolicy = .unbounded,
        fileID: String = #fileID,
        line: UInt = #line
    ) -> CallbackStream<String, Never> {
        let handle = UncheckedBox(self)
        return CallbackStream(buffering: buffering, fileID: fileID, line: line) { sink in
            let splitter = LineSplitter()
            let ended = _EndOnce()
            handle.value.readabilityHandler = { readable in
                guard !ended.isEnded else { return }  // a call already queued when the handler was unset
                let (chunks, atEnd) = _readAvailable(readable)
                var lines: [String] = []
                for chunk in chunks { lines += splitter.feed(chunk) }
                if atEnd { lines += splitter.feed(Data()) }  // flush the last line
                for line in lines {
                    if case .terminated = sink.yield(line) {
                        readable.readabilityHandler = nil
                        return
                    }
                }
                if atEnd, ended.end() {
                    readable.readabilityHandler = nil
                    sink.finish()
                }
            }
            return Cancellation { handle.value.readabilityHandler = nil }
        }
    }
}

/// Whether a handle's stream has seen the end of file. Foundation may call `readabilityHandler`
/// once more after it was set to nil (the call was already queued): that call found the end of
/// file again and finished the stream a second time (the BridgesSoak run caught it, ~1 in 200).
final class _EndOnce: Sendable {
    private let state = LockedState<Bool>.create(false)
    var isEnded: Bool { state.withLock { $0 } }
    /// True for the first caller only.
    func end() -> Bool { state.withLock { ended in defer { ended = true }; return !ended } }
}

/// Reads what is available now; `atEnd` when the end of file was reached.
///
/// swift-corelibs-foundation stops calling `readabilityHandler` once the writer has hung up,
/// even with data left (and never reports the end of file if the writer closed before the
/// handler was installed). So when `poll` reports a hang-up, the rest (at most what the pipe or
/// socket buffered) is read here, up to the end of file.
func _readAvailable(_ handle: FileHandle) -> (chunks: [Data], atEnd: Bool) {
    let first = handle.availableData
    if first.isEmpty { return ([], true) }
    var descriptor = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
    guard poll(&descriptor, 1, 0) == 1, descriptor.revents & Int16(POLLHUP) != 0 else { return ([first], false) }
    var chunks = [first]
    while true {
        let more = handle.availableData
        if more.isEmpty { return (chunks, true) }
        chunks.append(more)
    }
}

/// Splits bytes into lines across chunk boundaries. Fed only from the readability handler,
/// which Foundation calls serially; the lock makes that assumption unnecessary.
final class LineSplitter: Sendable {
    private let pending = LockedState<[UInt8]>.create([])

    /// Returns the complete lines in `data`; empty `data` (end of file) flushes the last line.
    func feed(_ data: Data) -> [String] {
        pending.withLock { pending in
            var lines: [String] = []
            if data.isEmpty {
                if !pending.isEmpty { lines.append(String(decoding: pending, as: UTF8.self)) }
                pending = []
                return lines
            }
            for byte in data {
                if byte == UInt8(ascii: "\n") {
                    lines.append(String(decoding: pending, as: UTF8.self))
                    pending.removeAll(keepingCapacity: true)
                } else {
                    pending.append(byte)
                }
            }
            return lines
        }
    }
}
#endif
