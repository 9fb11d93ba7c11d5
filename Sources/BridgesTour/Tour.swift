#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One chapter of the tour: a short, printed demonstration of one capability.
///
/// Each chapter prints two labelled blocks: `LEGACY`, what the hand-written code does (including
/// how it fails), then `BRIDGE`, what the Bridges adapter does with the same legacy API. Inside a
/// block, lines starting `│` are printed by the demonstrated code itself (the snippets MIGRATION.md
/// shows call `print`), lines starting `•` are the tour's own measurements. A chapter returns
/// normally only if what it measured is what Bridges promises: a chapter that finds a broken
/// promise throws ``TourFailure`` and the tour exits non-zero.
struct Chapter: Sendable {
    let name: String
    let title: String
    let run: @Sendable () async throws -> Void
}

struct TourFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Thrown by a chapter that cannot run in this build (it says how to run it).
struct ChapterSkipped: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Which side of a chapter a block shows.
enum Side {
    /// The code as it was written before Bridges: completion handlers, delegates, `sink`, hand-written continuations.
    case legacy
    /// The same legacy API through a Bridges adapter.
    case bridge
}

/// Starts a labelled block of a chapter.
func block(_ side: Side, _ title: String) {
    flushStandardOutput()
    Swift.print("")
    Swift.print("  " + (side == .legacy ? "LEGACY" : "BRIDGE") + "  " + title)
}

/// Prints one of the tour's own observations (a measurement, a verdict) in the current block.
/// A line starting with two spaces continues the previous observation.
func say(_ line: String) {
    Swift.print(line.hasPrefix("  ") ? "    " + line : "    • " + line)
}

/// The demonstrated code's own output. Every unqualified `print` in this module (legacy code,
/// bridged code and the MIGRATION.md snippets) lands here, marked `│` so it is told apart from the
/// tour's observations. (A module's own declaration shadows the standard library's.)
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    let text = items.map { "\($0)" }.joined(separator: separator)
    Swift.print("    │ " + text, terminator: terminator)
}

/// Flushes stdout, so output written by another process or by the runtime on stderr lands after it.
func flushStandardOutput() {
    fflush(nil)  // every output stream; `stdout` itself is a global var Swift 6 will not read
}

/// Fails the chapter unless `condition` holds.
func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw TourFailure(message()) }
}

/// Prints a measurement in the current block and keeps it, prefixed with `chapter`, for the end of the tour.
func sayFigure(_ line: String, chapter: String) {
    TourFigures.shared.record(chapter + ": " + line)
    say(line)
}

/// The headline figures this run measured, printed again at the end of the tour.
/// README.md and MIGRATION.md quote these lines and say which chapter measures them.
final class TourFigures: @unchecked Sendable {  // `lines` is only touched under `lock`
    static let shared = TourFigures()
    private let lock = TourLock()
    private var lines: [String] = []

    /// Records one figure (printed again at the end of the tour).
    func record(_ line: String) {
        lock.withLock { lines.append(line) }
    }

    var all: [String] { lock.withLock { lines } }
}

/// A minimal pthread mutex for the tour's glue (no Foundation needed here).
final class TourLock: @unchecked Sendable {  // the mutex is only used through lock/unlock
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }
    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A one-shot signal for chapters: `open()` from anywhere, `await wait()` until it is open.
final class TourSignal: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    init() { (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1)) }
    func open() {
        continuation.yield()
        continuation.finish()
    }
    func wait() async { for await _ in stream { return } }
}
