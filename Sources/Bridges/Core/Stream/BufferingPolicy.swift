/// What a ``CallbackStream`` does with elements the consumer has not taken yet.
///
/// One general form, *capacity × what happens when full*, with shorthands for the four policies
/// the project promises:
///
/// | policy | capacity | when full | typical source |
/// |---|---|---|---|
/// | ``unbounded`` | ∞ | — | event logs you must not lose |
/// | ``latest`` | 1 | drop the oldest (conflate) | location, progress, UI state |
/// | ``drop`` | 0 | drop the new element unless the consumer is waiting | taps, sensor noise |
/// | ``rendezvous`` | 0 | the producer waits until the consumer takes it | demand-driven producers |
/// | ``dropNewest(_:fileID:line:)``, ``dropOldest(_:fileID:line:)``, ``suspending(_:fileID:line:)`` | n | as named | the general forms |
/// | ``watermark(low:high:fileID:line:)`` | high | the producer waits until drained to low | sources where a pause/resume costs |
///
/// Under a *waiting* policy (``rendezvous``, ``suspending(_:fileID:line:)``, ``watermark(low:high:fileID:line:)``) a synchronous `yield` never
/// loses data: it enqueues beyond capacity and answers `.stopProducing`; `await send` suspends.
/// Under a *lossy* policy (``latest``, ``drop``, ``dropNewest(_:fileID:line:)``, ``dropOldest(_:fileID:line:)``) what does
/// not fit is dropped and reported to `onDrop` and the sink's `droppedCount`.
///
/// Equal policies compare equal whichever spelling made them: `.latest == .dropOldest(1)`,
/// `.drop == .dropNewest(0)`, `.rendezvous == .suspending(0)`.
public struct BufferingPolicy: Sendable, Hashable, CustomStringConvertible {
    @usableFromInline
    enum Kind: Sendable, Hashable {
        /// Every element is kept.
        case unbounded
        /// Keeps up to `n` elements; a new element that does not fit is dropped (`n` ≥ 0).
        case dropNewest(Int)
        /// Keeps up to `n` elements; the oldest makes room for a new one (`n` ≥ 1).
        case dropOldest(Int)
        /// Keeps up to `n` elements, then asks the producer to wait (`n` ≥ 0).
        case suspending(Int)
        /// Keeps up to `high` elements, then asks the producer to wait until the consumer has
        /// drained the buffer down to `low` (0 ≤ low < high).
        case watermark(low: Int, high: Int)
    }

    @usableFromInline let kind: Kind

    @inlinable init(_ kind: Kind) { self.kind = kind }

    /// Keeps every element: nothing is dropped and the producer is never asked to wait.
    /// Memory grows with whatever the consumer has not taken yet.
    public static let unbounded = BufferingPolicy(.unbounded)

    /// Keeps only the newest element not yet taken (conflation): `.dropOldest(1)`.
    public static let latest = BufferingPolicy(.dropOldest(1))

    /// Keeps nothing: an element is delivered only if the consumer is already waiting for one,
    /// otherwise it is dropped: `.dropNewest(0)`.
    public static let drop = BufferingPolicy(.dropNewest(0))

    /// Keeps nothing: each element is handed from producer to consumer. `await send` returns when
    /// the consumer has taken the element; a synchronous `yield` enqueues and answers
    /// `.stopProducing`: `.suspending(0)`.
    public static let rendezvous = BufferingPolicy(.suspending(0))

    /// Keeps up to `capacity` elements; an element that arrives when the buffer is full is dropped.
    ///
    /// - Precondition: `capacity >= 0`; otherwise the program stops with a message naming the
    ///   argument and the call's file and line, in every build configuration.
    public static func dropNewest(_ capacity: Int, fileID: String = #fileID, line: UInt = #line) -> BufferingPolicy {
        if capacity < 0 {
            _argumentError(
                "BufferingPolicy.dropNewest(_:): capacity must be ≥ 0, got \(capacity)", fileID: fileID, line: line)
        }
        return BufferingPolicy(.dropNewest(capacity))
    }

    /// Keeps up to `capacity` elements; when the buffer is full the oldest one is dropped to make
    /// room for the new one.
    ///
    /// - Precondition: `capacity >= 1` (with no room, there is no "oldest" to drop: use ``drop``);
    ///   otherwise the program stops with a message naming the argument and the call's file and
    ///   line, in every build configuration.
    public static func dropOldest(_ capacity: Int, fileID: String = #fileID, line: UInt = #line) -> BufferingPolicy {
        if capacity < 1 {
            _argumentError(
                "BufferingPolicy.dropOldest(_:): capacity must be ≥ 1, got \(capacity) (use .drop to keep nothing)",
                fileID: fileID, line: line
            )
        }
        return BufferingPolicy(.dropOldest(capacity))
    }

    /// Keeps up to `capacity` elements; beyond that `await send` suspends until the consumer takes
    /// one, and a synchronous `yield` still enqueues but answers `.stopProducing`.
    ///
    /// - Precondition: `capacity >= 0`; otherwise the program stops with a message naming the
    ///   argument and the call's file and line, in every build configuration.
    public static func suspending(_ capacity: Int, fileID: String = #fileID, line: UInt = #line) -> BufferingPolicy {
        if capacity < 0 {
            _argumentError(
                "BufferingPolicy.suspending(_:): capacity must be ≥ 0, got \(capacity)", fileID: fileID, line: line)
        }
        return BufferingPolicy(.suspending(capacity))
    }

    /// Keeps up to `high` elements; beyond that `await send` suspends and a synchronous `yield`
    /// answers `.stopProducing`, like ``suspending(_:fileID:line:)``, but the producer is told to resume
    /// (`onDemand`, publisher demand) only once the consumer has drained the buffer down to
    /// `low`, and then for the whole room up to `high`: fewer, larger pause/resume cycles for a
    /// source where each costs something (a socket read, a database page). `.suspending(n)` behaves
    /// as `.watermark(low: n - 1, high: n)`.
    ///
    /// - Precondition: `0 <= low < high`; otherwise the program stops with a message naming the
    ///   argument and the call's file and line, in every build configuration.
    public static func watermark(low: Int, high: Int, fileID: String = #fileID, line: UInt = #line) -> BufferingPolicy {
        if low < 0 {
            _argumentError(
                "BufferingPolicy.watermark(low:high:): low must be ≥ 0, got \(low)", fileID: fileID, line: line)
        }
        if low >= high {
            _argumentError(
                "BufferingPolicy.watermark(low:high:): low must be < high, got low \(low), high \(high)",
                fileID: fileID, line: line
            )
        }
        return BufferingPolicy(.watermark(low: low, high: high))
    }

    /// How many elements the buffer holds before the policy applies; `nil` for ``unbounded``.
    public var capacity: Int? {
        switch kind {
        case .unbounded: nil
        case .dropNewest(let n), .dropOldest(let n), .suspending(let n): n
        case .watermark(_, let high): high
        }
    }

    /// Whether the policy may drop elements (``latest``, ``drop``, `dropNewest`, `dropOldest`).
    public var isLossy: Bool {
        switch kind {
        case .unbounded, .suspending, .watermark: false
        case .dropNewest, .dropOldest: true
        }
    }

    /// Whether the producer is asked to wait when the buffer is full (``rendezvous``, `suspending`).
    public var isWaiting: Bool {
        switch kind {
        case .suspending, .watermark: true
        case .unbounded, .dropNewest, .dropOldest: false
        }
    }

    public var description: String {
        switch kind {
        case .unbounded: ".unbounded"
        case .dropOldest(1): ".latest"
        case .dropNewest(0): ".drop"
        case .suspending(0): ".rendezvous"
        case .dropNewest(let n): ".dropNewest(\(n))"
        case .dropOldest(let n): ".dropOldest(\(n))"
        case .suspending(let n): ".suspending(\(n))"
        case .watermark(let low, let high): ".watermark(low: \(low), high: \(high))"
        }
    }
}
