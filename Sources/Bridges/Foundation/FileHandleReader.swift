#if canImport(Foundation)
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One file handle's reader: a thread that waits with `poll` on the descriptor and on a wake-up
/// pipe, reads only while the stream has room, and exits when the stream ends.
///
/// The room is the stream's own demand, counted by a ``DemandGate`` fed by `onDemand`: the gate
/// "pauses" the reader when the credit runs out (the thread then polls the wake-up pipe only)
/// and "resumes" it by writing to the pipe. The teardown stops the gate, wakes the thread and
/// waits for it to exit, so no read happens after the loop ended and the descriptor is free for
/// the next loop.
final class _FileHandleReader<Element: Sendable>: Sendable {
    typealias Sink = CallbackStream<Element, Never>.Sink

    /// The stream's demand; stopped by the teardown.
    private let gate: DemandGate
    /// Signalled once, when the thread has left its loop and let go of the handle.
    private let exit = DispatchSemaphore(value: 0)
    /// Keeps the handle (and so its descriptor) open while the thread reads; the thread lets go
    /// of it before it signals its exit, so the handle is released when the loop ends.
    private let handle: LockedState<Handoff<FileHandle>?>
    private let descriptor: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let site: CallSite
    private let decode: @Sendable (Data?) -> [Element]

    private init(
        handle: Handoff<FileHandle>, wake: (Int32, Int32), site: CallSite,
        decode: @escaping @Sendable (Data?) -> [Element]
    ) {
        self.handle = LockedState(handle)
        self.descriptor = handle.value.fileDescriptor
        (self.wakeRead, self.wakeWrite) = wake
        self.site = site
        self.decode = decode
        let wakeWrite = wake.1
        // Pausing needs no call: the thread looks at the credits before each poll. Resuming
        // wakes it. The gate starts paused (no credit until `onDemand` reports some), so that
        // the first credit resumes it.
        gate = DemandGate(pause: {}, resume: { _FileHandleReader.signalWake(wakeWrite) })
        gate.spend(0)
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
        _ handle: Handoff<FileHandle>,
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
            site.report(
                .fileHandleReadFailed,
                "could not start reading file descriptor \(descriptor): pipe() failed: \(reason)", bridge: nil)
            sink.finish()
            return Cancellation {}
        }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
        let reader = _FileHandleReader(handle: handle, wake: (fds[0], fds[1]), site: site, decode: decode)
        sink.onDemand { reader.gate.add($0) }  // reports the room now, on this thread
        let thread = Thread { reader.run(sink) }
        thread.name = "Bridges.FileHandle reader (fd \(descriptor))"
        thread.start()
        return Cancellation { reader.stop() }
    }

    /// The teardown (run once): no read starts after this returns, and the descriptor is
    /// released. On the reader thread itself (the stream finished there) the exit was already
    /// signalled, so the wait returns at once.
    private func stop() {
        gate.stop()
        Self.signalWake(wakeWrite)
        exit.wait()
    }

    private static func signalWake(_ wakeWrite: Int32) {
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
        do {
            // Released at the end of this block, outside the lock and before the exit is
            // signalled (a local of the whole function would live until its end in debug builds:
            // after the teardown returned, with the handle still alive).
            let handle = self.handle.withLock { handle in
                defer { handle = nil }
                return handle
            }
            withExtendedLifetime(handle) {}
        }
        _ReadingDescriptors.release(descriptor)
        exit.signal()
        switch end {
        case .endOfFile(let last):
            for element in last { sink.yield(element) }
            sink.finish()
        case .failed(let message):
            site.report(
                .fileHandleReadFailed, "reading file descriptor \(descriptor) failed: \(message); the stream ended",
                bridge: nil)
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
            if gate.isStopped { return .cancelled }
            // No credit: poll the wake-up pipe only; the credit that comes back resumes the gate,
            // which writes to the pipe (also when it came between this read and the poll).
            let credits = gate.credits
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
            // Spend *before* yielding (see DemandGate): once yielded, the consumer may take the
            // elements and report the room they leave, which a later spend would eat.
            gate.spend(elements.count)
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
#endif
