#if canImport(Foundation)
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension FileHandle {
    /// The data that becomes readable on this handle (a pipe, a socket, a file) as a stream of
    /// chunks; finishes at end of file.
    ///
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
        let handle = UncheckedBox(self)
        let site = CallSite(fileID: fileID, line: line)
        return CallbackStream(buffering: buffering, fileID: fileID, line: line) { sink in
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
        let handle = UncheckedBox(self)
        let site = CallSite(fileID: fileID, line: line)
        return CallbackStream(buffering: buffering, fileID: fileID, line: line) { sink in
            let splitter = LineSplitter()
            return _FileHandleReader.start(handle, sink: sink, site: site) { chunk in
                splitter.feed(chunk ?? Data())  // nil: end of file, which flushes the last line
            }
        }
    }
}

extension BridgeDiagnostic.Kind {
    /// A second loop was started on a file handle that a loop (or a `readabilityHandler`) is
    /// already reading; it ended at once.
    public static let fileHandleAlreadyRead = BridgeDiagnostic.Kind.other("fileHandleAlreadyRead")
    /// Reading a file handle failed (it was closed while being read, or `read` failed); the
    /// stream ended.
    public static let fileHandleReadFailed = BridgeDiagnostic.Kind.other("fileHandleReadFailed")
}

/// One file handle's reader: a thread that waits with `poll` on the descriptor and on a wake-up
/// pipe, reads only while the stream has room (credits from `onDemand`), and exits when the
/// stream ends. The teardown sets `cancelled`, wakes the thread and waits for it to exit, so no
/// read happens after the loop ended and the descriptor is free for the next loop.
final class _FileHandleReader<Element: Sendable>: Sendable {
    typealias Sink = CallbackStream<Element, Never>.Sink

    private struct State {
        /// How many more elements the stream has room for (`Int.max`: no limit).
        var credits = 0
        /// The thread is waiting in `poll` for credits only: `add` must wake it.
        var waitingForCredits = false
        var cancelled = false
        /// The thread has left its loop: nothing to wait for.
        var exited = false
    }

    private let state = LockedState<State>(State())
    private let exit = DispatchSemaphore(value: 0)
    /// Keeps the handle (and so its descriptor) open while the thread reads; the thread lets go
    /// of it before it signals its exit, so the handle is released when the loop ends.
    private let handle: LockedState<UncheckedBox<FileHandle>?>
    private let descriptor: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let site: CallSite
    private let decode: @Sendable (Data?) -> [Element]

    private init(handle: UncheckedBox<FileHandle>, wake: (Int32, Int32), site: CallSite, decode: @escaping @Sendable (Data?) -> [Element]) {
        self.handle = LockedState(handle)
        self.descriptor = handle.value.fileDescriptor
        (self.wakeRead, self.wakeWrite) = wake
        self.site = site
        self.decode = decode
    }

    /// Both ends of the wake-up pipe are closed only here, once neither the thread nor the
    /// teardown can use them: writing to a closed (and reused) descriptor would write into
    /// someone else's file.
    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    /// Starts reading `handle` into `sink`; returns the teardown.
    static func start(
        _ handle: UncheckedBox<FileHandle>,
        sink: Sink,
        site: CallSite,
        decode: @escaping @Sendable (Data?) -> [Element]
    ) -> Cancellation {
        let descriptor = handle.value.fileDescriptor
        if handle.value.readabilityHandler != nil {
            site.report(
                .fileHandleAlreadyRead,
                "file descriptor \(descriptor) has a readabilityHandler installed; a loop reading it too would split the data. This loop ended at once.",
                bridge: handle.value)
            sink.finish()
            return Cancellation {}
        }
        guard _ReadingDescriptors.claim(descriptor) else {
            site.report(
                .fileHandleAlreadyRead,
                "file descriptor \(descriptor) is already being read by another loop; two loops would split the data. This loop ended at once (read it with one loop and fan out with Broadcast).",
                bridge: handle.value)
            sink.finish()
            return Cancellation {}
        }
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            let reason = String(cString: strerror(errno))
            _ReadingDescriptors.release(descriptor)
            site.report(.fileHandleReadFailed, "could not start reading file descriptor \(descriptor): pipe() failed: \(reason)", bridge: nil)
            sink.finish()
            return Cancellation {}
        }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
        let reader = _FileHandleReader(handle: handle, wake: (fds[0], fds[1]), site: site, decode: decode)
        sink.onDemand { reader.add($0) }  // reports the room now, on this thread
        let thread = Thread { reader.run(sink) }
        thread.name = "Bridges.FileHandle reader (fd \(descriptor))"
        thread.start()
        return Cancellation { reader.stop() }
    }

    /// The stream has room for `count` more elements.
    private func add(_ count: Int) {
        guard count > 0 else { return }
        let wake = state.withLock { state -> Bool in
            state.credits = state.credits > Int.max - count ? Int.max : state.credits + count
            guard state.waitingForCredits else { return false }
            state.waitingForCredits = false
            return true
        }
        if wake { signalWake() }
    }

    /// The teardown: no read starts after this returns, and the descriptor is released.
    private func stop() {
        let running = state.withLock { state -> Bool in
            state.cancelled = true
            return !state.exited
        }
        guard running else { return }
        signalWake()
        exit.wait()
    }

    private func signalWake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)  // non-blocking: a full pipe already holds a wake-up
    }

    private func drainWake() {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &bytes, bytes.count) > 0 {}
    }

    /// The reader thread.
    private func run(_ sink: Sink) {
        let end = readUntilTheEnd(sink)
        // Leave before finishing: the teardown that finish runs (here, on this thread) must not
        // wait for this thread, and code after the loop may start a new reader at once.
        state.withLock { $0.exited = true }
        do {
            // Released at the end of this block, outside the lock and before the exit is
            // signalled (a local of the whole function would live until its end in debug builds:
            // after the teardown returned, with the handle still alive).
            let handle = self.handle.withLock { handle in defer { handle = nil }; return handle }
            withExtendedLifetime(handle) {}
        }
        _ReadingDescriptors.release(descriptor)
        exit.signal()
        switch end {
        case .endOfFile(let last):
            for element in last { sink.yield(element) }
            sink.finish()
        case .failed(let message):
            site.report(.fileHandleReadFailed, "reading file descriptor \(descriptor) failed: \(message); the stream ended", bridge: nil)
            sink.finish()
        case .cancelled:
            break
        }
    }

    private enum End {
        case endOfFile([Element])
        case failed(String)
        case cancelled
    }

    private func readUntilTheEnd(_ sink: Sink) -> End {
        var info = stat()
        let isPipe = fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFIFO
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
        defer { buffer.deallocate() }
        var pollable = true  // false: an open descriptor `poll` cannot watch (macOS: a terminal)
        while true {
            let credits = state.withLock { state -> Int? in
                if state.cancelled { return nil }
                state.waitingForCredits = state.credits == 0
                return state.credits
            }
            guard let credits else { return .cancelled }
            var fds = [
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            ]
            let ready = pollable ? poll(&fds, credits > 0 ? 2 : 1, -1) : _selectReadable(&fds, credits > 0 ? 2 : 1)
            if ready < 0 {
                if errno == EINTR { continue }
                return .failed((pollable ? "poll: " : "select: ") + String(cString: strerror(errno)))
            }
            if fds[0].revents != 0 {
                drainWake()
                continue  // cancelled, or credits came back: look again
            }
            let events = Int32(fds[1].revents)
            guard credits > 0, events != 0 else { continue }
            if events & Int32(POLLNVAL) != 0 {
                // macOS `poll` answers POLLNVAL for character devices; `select` watches them.
                if pollable && fcntl(descriptor, F_GETFD) != -1 {
                    pollable = false
                    continue
                }
                return .failed("the descriptor is not open (closed before or while it was being read)")
            }
            var wanted = capacity
            if isPipe {
                // Read only what is there, so that the read cannot block (someone else may have
                // read it since poll answered) and the teardown never waits on a blocked read.
                var available: Int32 = 0
                let asked = withUnsafeMutablePointer(to: &available) { ioctl(descriptor, _fionread, $0) }
                if asked == 0 {
                    if available == 0 && events & Int32(POLLHUP | POLLERR) == 0 { continue }
                    if available > 0 { wanted = min(Int(available), capacity) }
                }
            }
            let count = read(descriptor, buffer, wanted)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return .failed("read: " + String(cString: strerror(errno)))
            }
            if count == 0 { return .endOfFile(decode(nil)) }
            let elements = decode(Data(bytes: buffer, count: count))
            // Spend the credits *before* yielding: once yielded, the consumer may take the
            // elements and report the room they leave; credits spent after that report would
            // eat it (the elements beyond the credit, which the stream never counted against
            // its demand, clamp at zero), and the reader would wait for demand the stream
            // believes it already gave: a lost wake-up.
            state.withLock { state in
                if state.credits != Int.max { state.credits = max(0, state.credits - elements.count) }
            }
            for element in elements {
                if case .terminated = sink.yield(element) { return .cancelled }
            }
        }
    }
}

/// `poll(&fds, count, -1)` through `select`, for an open descriptor `poll` cannot watch (macOS
/// `poll` answers `POLLNVAL` for character devices, a terminal included; `select` watches them):
/// sets `revents` to `POLLIN` for each readable descriptor and returns how many there are, or -1
/// with `errno` (`EINVAL` for a descriptor from `FD_SETSIZE` up).
func _selectReadable(_ fds: inout [pollfd], _ count: Int) -> Int32 {
    #if _endian(big)
    errno = ENOSYS  // the bit arithmetic below is little-endian's
    return -1
    #else
    let watched = fds.prefix(count).map { Int($0.fd) }
    guard let highest = watched.max(), highest < Int(FD_SETSIZE), watched.allSatisfy({ $0 >= 0 }) else {
        errno = EINVAL
        return -1
    }
    // Descriptor n is bit n of the set counted from its first byte: `FD_SET` on a little-endian
    // machine, whether the set is made of 32-bit words (Darwin) or 64-bit ones (glibc).
    var set = fd_set()
    withUnsafeMutableBytes(of: &set) { bytes in
        for fd in watched { bytes[fd / 8] |= UInt8(1) << (fd % 8) }
    }
    let ready = select(Int32(highest + 1), &set, nil, nil, nil)
    guard ready >= 0 else { return ready }
    withUnsafeBytes(of: &set) { bytes in
        for i in 0..<count {
            let fd = watched[i]
            fds[i].revents = bytes[fd / 8] & (UInt8(1) << (fd % 8)) != 0 ? Int16(POLLIN) : 0
        }
    }
    return ready
    #endif
}

/// `FIONREAD`. On Apple platforms it is a function-like macro (`_IOR('f', 127, int)`), which
/// Swift does not import: its value, spelled out.
#if canImport(Darwin)
private let _fionread: UInt = 0x4004_667F
#else
private let _fionread = UInt(FIONREAD)
#endif

/// The file descriptors a loop is reading now: a second loop on one of them is refused.
package enum _ReadingDescriptors {
    private static let reading = LockedState<Set<Int32>>([])

    static func claim(_ descriptor: Int32) -> Bool { reading.withLock { $0.insert(descriptor).inserted } }
    static func release(_ descriptor: Int32) { _ = reading.withLock { $0.remove(descriptor) } }
    /// Whether a loop is reading `descriptor` now (tests check that a reader has gone).
    package static func isReading(_ descriptor: Int32) -> Bool { reading.withLock { $0.contains(descriptor) } }
}

/// Splits bytes into lines across chunk boundaries. Fed only from the reader thread; the lock
/// makes that assumption unnecessary.
final class LineSplitter: Sendable {
    private let pending = LockedState<[UInt8]>([])

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
