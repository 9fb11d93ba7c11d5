#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine
import Bridges

/// A Combine publisher over any `AsyncSequence`, for code that still speaks Combine.
///
/// Before (no Apple API goes this way; a hand-rolled subject drops demand on the floor):
/// ```swift
/// let subject = PassthroughSubject<Item, Never>()
/// Task { for await item in items { subject.send(item) } }
/// return subject.eraseToAnyPublisher()
/// ```
/// After:
/// ```swift
/// return items.publisher.eraseToAnyPublisher()
/// ```
///
/// - Each subscription makes its own iterator (`makeAsyncIterator()` per subscriber) in its own
///   task, started only when the subscriber has asked for at least one element.
/// - Backpressure: one unit of demand is taken before each `next()`; at zero demand iteration
///   pauses (the task suspends) until `request(_:)`. The subscriber never receives more than it
///   requested, and the sequence is never asked for an element nobody requested.
/// - `cancel()` cancels the iterating task (so a cancellation-aware sequence stops and tears its
///   source down) and releases the subscriber. Nothing is sent after a `cancel()` made from inside
///   `receive(_:)`; a `cancel()` from another thread may race the one element being handed over
///   at that moment (as in Combine), never more, and never a completion.
/// - Completion is sent exactly once: `.finished` when `next()` returns nil, `.failure` when it
///   throws. Since `next()` is only called with demand, a subscriber that has received exactly
///   the elements it asked for sees `.finished` once it requests one more (Combine's `Sink`, with
///   unlimited demand, sees it at once).
/// - Threading: the subscriber is called from the iterating task (the global concurrent
///   executor), one call at a time. Use `receive(on:)` to hop to a scheduler.
/// - `request(.none)` is reported as `BridgeDiagnostic.Kind.invalidDemand` and ignored.
public struct AsyncSequencePublisher<Base: AsyncSequence & Sendable, Failure: Error>: Publisher, Sendable {
    public typealias Output = Base.Element

    private let base: Base
    private let failure: @Sendable (any Error) -> Failure
    private let reporter: Reporter
    /// The sequence is known to end after one element (``AsyncFuture``): complete right after it,
    /// without waiting for demand to ask `next()` for the end.
    private let endsAfterOneElement: Bool

    init(
        _ base: Base,
        failure: @escaping @Sendable (any Error) -> Failure,
        endsAfterOneElement: Bool = false,
        fileID: String,
        line: UInt
    ) {
        self.base = base
        self.failure = failure
        self.endsAfterOneElement = endsAfterOneElement
        self.reporter = Reporter(fileID: fileID, line: line)
    }

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        let subscription = AsyncSequenceSubscription(
            base: base,
            subscriber: subscriber,
            failure: failure,
            endsAfterOneElement: endsAfterOneElement,
            reporter: reporter
        )
        subscriber.receive(subscription: subscription)
        subscription.didSubscribe()
    }
}

extension AsyncSequence where Self: Sendable {
    /// A Combine publisher over this sequence; see ``AsyncSequencePublisher``.
    ///
    /// It fails with `any Error` (whatever `next()` threw). For a sequence whose `Failure` is
    /// `Never` (where the OS's Swift runtime knows `AsyncSequence.Failure`: macOS 15, iOS 18 and
    /// later, and Linux), the more specific overload gives a publisher that never fails.
    public func publisher(fileID: String = #fileID, line: UInt = #line) -> AsyncSequencePublisher<Self, any Error> {
        AsyncSequencePublisher(self, failure: { $0 }, fileID: fileID, line: line)
    }

    /// The same publisher, type-erased: `sequence.eraseToAnyPublisher()` reads like Combine.
    public func eraseToAnyPublisher(fileID: String = #fileID, line: UInt = #line) -> AnyPublisher<Element, any Error> {
        publisher(fileID: fileID, line: line).eraseToAnyPublisher()
    }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
extension AsyncSequence where Self: Sendable, Failure == Never {
    /// A Combine publisher over this sequence that never fails; see ``AsyncSequencePublisher``.
    public func publisher(fileID: String = #fileID, line: UInt = #line) -> AsyncSequencePublisher<Self, Never> {
        AsyncSequencePublisher(self, failure: { error in
            preconditionFailure("Internal inconsistency: \(Self.self), whose Failure is Never, threw \(error)")
        }, fileID: fileID, line: line)
    }

    /// The same publisher, type-erased.
    public func eraseToAnyPublisher(fileID: String = #fileID, line: UInt = #line) -> AnyPublisher<Element, Never> {
        publisher(fileID: fileID, line: line).eraseToAnyPublisher()
    }
}

#endif

#if canImport(Combine) || OpenCombine
// Never-failing publishers for the stream types whose failure is known without the Swift 6
// runtime's `AsyncSequence.Failure`, so they are `Never` on every OS version.

extension AsyncStream where Element: Sendable {
    /// A Combine publisher over this stream that never fails; see ``AsyncSequencePublisher``.
    public func publisher(fileID: String = #fileID, line: UInt = #line) -> AsyncSequencePublisher<Self, Never> {
        AsyncSequencePublisher(self, failure: { error in
            preconditionFailure("Internal inconsistency: AsyncStream threw \(error)")
        }, fileID: fileID, line: line)
    }
}

extension CallbackStream where Failure == Never, Element: Sendable {
    /// A Combine publisher over this stream that never fails; see ``AsyncSequencePublisher``.
    public func publisher(fileID: String = #fileID, line: UInt = #line) -> AsyncSequencePublisher<Self, Never> {
        AsyncSequencePublisher(self, failure: { error in
            preconditionFailure("Internal inconsistency: CallbackStream<_, Never> threw \(error)")
        }, fileID: fileID, line: line)
    }
}
#endif
