#if canImport(Foundation)
import Foundation

extension FileHandle {
    /// The data that becomes readable on this handle (a pipe, a socket, a file) as a stream of
    /// chunks, through `readabilityHandler`; finishes at end of file.
    ///
    /// - The handler is installed when iteration starts and removed at teardown. Chunks arrive
    ///   on Foundation's reading thread (or, right after a resume, a global queue's).
    /// - Under a waiting policy (`.rendezvous`, `.suspending(n)`) reading **pauses** when the
    ///   buffer is full (the handler is removed, so the pipe or socket fills and its writer
    ///   waits) and resumes when the consumer has taken enough: memory stays bounded by the
    ///   capacity plus one chunk. Nothing is lost.
    /// - One loop per handle: a second loop started while one is reading gets no data; its
    ///   stream finishes at once and the misuse is reported (`fileHandleAlreadyRead`), and it
    ///   never removes the first loop's handler.
    public func readChunks(
        buffering: BufferingPolicy = .unbounded,
        fileID: String = #fileID,
        line: UInt = #line
    ) -> CallbackStream<Data, Never> {
        readStream(buffering: buffering, fileID: fileID, line: line, makeSplitter: { nil })
    }

    /// The lines (split on `\n`, without the terminator; a final line without one is included)
    /// that become readable on this handle, decoded as UTF-8. See ``readChunks(buffering:fileID:line:)``:
    /// the same pausing under waiting policies, and one loop per handle.
    public func readLines(
        buffering: BufferingPolicy = .unbounded,
        fileID: String = #fileID,
        line: UInt = #line
    ) -> CallbackStream<String, Never> {
        readStream(buffering: buffering, fileID: fileID, line: line, makeSplitter: { LineSplitter() })
    }

    private func readStream<Element>(
        buffering: BufferingPolicy,
        fileID: String,
        line: UInt,
        makeSplitter: @escaping @Sendable () -> LineSplitter?
    ) -> CallbackStream<Element, Never> {
        let handle = UncheckedBox(self)
        let site = CallSite(fileID: fileID, line: line)
        return CallbackStream(buffering: buffering, fileID: fileID, line: line) { sink in
            guard let claim = HandleClaims.shared.claim(handle.value) else {
                site.report(
                    .other("fileHandleAlreadyRead"),
                    "readChunks()/readLines() was started on a FileHandle that another loop is already reading; this loop gets no data and ends at once (the other keeps its handler)",
                    bridge: nil  // once per loop: this stream ends here
                )
                sink.finish()
                return Cancellation()
            }
            let reader = HandleReader(handle.value, splitter: makeSplitter()) { (elements: [Any], atEnd: Bool) -> Bool in
                for element in elements {
                    // Data and String are Sendable; `Any` only carries them from the one reader.
                    nonisolated(unsafe) let element = element as! Element
                    if case .terminated = sink.yield(element) { return false }
                }
                if atEnd { sink.finish() }
                return !atEnd
            }
            if buffering.isWaiting {
                let gate = DemandGate(pause: { reader.pause() }, resume: { reader.resume() })
                reader.gate = gate
                sink.onDemand { gate.add($0) }
            }
            reader.start()
            return Cancellation {
                reader.stop()
                HandleClaims.shared.release(handle.value, claim)
            }
        }
    }
}

/// Which handles a stream is reading now, so that a second loop cannot take (or, at its
/// teardown, remove) the first one's `readabilityHandler`.
final class HandleClaims: Sendable {
    static let shared = HandleClaims()
    private let owners = LockedState<(next: UInt64, byHandle: [ObjectIdentifier: UInt64])>.create((0, [:]))

    /// A claim on `handle`, or nil if another stream holds it.
    func claim(_ handle: FileHandle) -> UInt64? {
        owners.withLock { owners in
            let key = ObjectIdentifier(handle)
            guard owners.byHandle[key] == nil else { return nil }
            owners.next += 1
            owners.byHandle[key] = owners.next
            return owners.next
        }
    }

    func isClaimed(_ handle: FileHandle) -> Bool {
        owners.withLock { $0.byHandle[ObjectIdentifier(handle)] != nil }
    }

    func release(_ handle: FileHandle, _ claim: UInt64) {
        owners.withLock { owners in
            let key = ObjectIdentifier(handle)
            if owners.byHandle[key] == claim { owners.byHandle[key] = nil }
        }
    }
}

/// Reads one handle for one stream: installs `readabilityHandler`, removes it to pause and
/// installs it again to resume (a `DemandGate` calls these, strictly alternating), and reads on
/// one serial queue, so chunks stay in order even when a resume reads what became readable
/// while paused. Once the end of file was delivered (or the consumer left), a handler call that
/// Foundation had already queued finds `done` and does nothing: the stream finishes once.
final class HandleReader: @unchecked Sendable {  // `done` is behind its lock; `gate` is set before `start()`; FileHandle's handler property is thread-safe
    private let handle: FileHandle
    private let splitter: LineSplitter?
    private let deliver: ([Any], Bool) -> Bool
    /// Serialises reads (the teardown may run on it, from `deliver`: nothing here waits for it).
    private let queue = DispatchQueue(label: "Bridges.FileHandleReader")
    private let done = LockedState<Bool>.create(false)
    var gate: DemandGate?

    init(_ handle: FileHandle, splitter: LineSplitter?, deliver: @escaping ([Any], Bool) -> Bool) {
        self.handle = handle
        self.splitter = splitter
        self.deliver = deliver
    }

    /// Installs the handler, and reads once now: swift-corelibs-foundation never calls a
    /// handler installed after the writer hung up.
    func start() { resume() }

    func pause() { handle.readabilityHandler = nil }

    func resume() {
        install()
        // Data (or the end of file) that arrived while paused may never fire a new handler on
        // swift-corelibs-foundation: look once now.
        DispatchQueue.global().async { self.readIfReadable() }
    }

    /// The stream's teardown: no more reading, handler removed.
    func stop() {
        gate?.stop()
        done.withLock { $0 = true }
        handle.readabilityHandler = nil
    }

    private func install() {
        handle.readabilityHandler = { [weak self] _ in self?.readIfReadable() }
    }

    private func readIfReadable() {
        queue.sync {
            guard !done.withLock({ $0 }) else {
                // A resume that raced with the teardown re-installed the handler: remove it,
                // unless another loop has claimed the handle since (then it is that loop's).
                if !HandleClaims.shared.isClaimed(handle) { handle.readabilityHandler = nil }
                return
            }
            // Out of credit: a handler call already queued when the reader paused must not read
            // (the resume that follows new credit reads again).
            if let gate, gate.credits == 0 { return }
            var descriptor = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 0) == 1 else { return }  // nothing to read now: reading would block
            let (chunks, atEnd) = _readAvailable(handle)
            var elements: [Any] = []
            if let splitter {
                for chunk in chunks { elements += splitter.feed(chunk) as [Any] }
                if atEnd { elements += splitter.feed(Data()) as [Any] }
            } else {
                elements = chunks
            }
            if !deliver(elements, atEnd) {
                done.withLock { $0 = true }
                return  // the teardown (run by `finish`, or by the consumer) removes the handler
            }
            if !elements.isEmpty, let gate { gate.spend(elements.count) }
        }
    }
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
