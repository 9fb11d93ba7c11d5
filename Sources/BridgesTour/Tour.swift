/// One chapter of the tour: a short, printed demonstration of one capability.
///
/// Each chapter prints what the legacy code did and what the bridged code did (values
/// delivered, lost, cancellations reaching the legacy API, objects released), and returns
/// normally only if what it printed is what Bridges promises: a chapter that finds a broken
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

/// Prints one line of a chapter, indented under its title.
func say(_ line: String) {
    print("  " + line)
}

/// Fails the chapter unless `condition` holds.
func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw TourFailure(message()) }
}

/// A one-shot signal for chapters: `open()` from anywhere, `await wait()` until it is open.
final class TourSignal: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    init() { (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1)) }
    func open() { continuation.yield(); continuation.finish() }
    func wait() async { for await _ in stream { return } }
}
