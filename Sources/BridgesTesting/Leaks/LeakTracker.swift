/// Tracks objects and fails the test naming each one that is still alive when it should be gone.
///
/// <!-- snippet: test — with a `LoginViewModel` -->
/// ```swift
/// await withLeakTracking { tracker in
///     let model = LoginViewModel()
///     tracker.track(model)
///     await model.start()
/// }   // fails: "LoginViewModel (tracked at LoginTests.swift:12) is still alive"
/// ```
///
/// Inside ``withSerialTasks(isolation:fileID:line:_:)`` the check first waits until tracked tasks are idle,
/// so an object released by a task that is finishing (a stream's teardown, a weak-owner task
/// noticing its owner is gone) is given that chance deterministically. Outside it, the check
/// looks once, when it runs: await whatever releases the object (a teardown, a task's value)
/// before the scope ends.
public final class LeakTracker: Sendable {
    // `object` is a weak reference, set once in init; weak loads are atomic
    private final class Entry: @unchecked Sendable {
        weak var object: AnyObject?
        let name: String
        let fileID: String
        let line: UInt

        init(_ object: AnyObject, name: String, fileID: String, line: UInt) {
            self.object = object
            self.name = name
            self.fileID = fileID
            self.line = line
        }
    }

    private let entries = LockedState<[Entry]>([])

    public init() { XCTestFailureRecorder.start() }

    /// Starts tracking `object`, without retaining it. `name` defaults to its type.
    public func track(_ object: AnyObject, as name: String? = nil, fileID: String = #fileID, line: UInt = #line) {
        let entry = Entry(object, name: name ?? String(describing: type(of: object)), fileID: fileID, line: line)
        entries.withLock { $0.append(entry) }
    }

    /// Names of tracked objects still alive, in tracking order.
    public var aliveObjects: [String] { entries.withLock { $0.filter { $0.object != nil }.map(\.name) } }

    /// Records one test failure per tracked object still alive, at the line where it was tracked.
    public func expectAllReleased(fileID: String = #fileID, line: UInt = #line) async {
        await settleIfTracked(fileID: fileID, line: line)
        let alive = entries.withLock { $0.filter { $0.object != nil } }
        for entry in alive {
            _reportTestFailure(
                "\(entry.name) (tracked at \(entry.fileID):\(entry.line)) is still alive at \(fileID):\(line); something still holds it (a Task capturing self strongly, a delegate proxy never torn down, a cycle)",
                fileID: entry.fileID, line: entry.line
            )
        }
    }
}

/// Runs `body` with a ``LeakTracker``, then fails the test for every tracked object still alive.
///
/// Objects created inside `body` and held only by its local variables are released when `body`
/// returns, before the check.
public func withLeakTracking<R>(
    isolation: isolated (any Actor)? = #isolation,
    fileID: String = #fileID,
    line: UInt = #line,
    _ body: (LeakTracker) async throws -> R
) async rethrows -> R {
    let tracker = LeakTracker()
    let result = try await body(tracker)
    await tracker.expectAllReleased(fileID: fileID, line: line)
    return result
}
