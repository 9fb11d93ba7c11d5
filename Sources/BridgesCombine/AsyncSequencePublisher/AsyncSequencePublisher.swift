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
/// <!-- snippet: members — of a view model with `items`, an `AsyncSequence` of `Item` -->
/// ```swift
/// func itemsPublisher() -> AnyPublisher<Item, Never> {
///     let subject = PassthroughSubject<Item, Never>()
///     Task { for await item in itemStream { subject.send(item) } }
///     return subject.eraseToAnyPublisher()
/// }
/// ```
/// After:
/// <!-- snippet: members — of a view model with `items`, an `AsyncSequence` of `Item` -->
/// ```swift
/// func itemsPublisher() -> AnyPublisher<Item, Never> {
///     itemStream.publisher().eraseToAnyPublisher()
/// }
/// ```
///
/// - Each subscription makes its own iterator (`makeAsyncIterator()` per subscriber) in its own
///   task, started when the subscriber has returned from `receive(subscription:)`.
/// - Backpressure: the task asks the sequence for one element ahead, then takes one unit of
///   demand before emitting it; at zero demand it pauses (suspended, holding that one element)
///   until `request(_:)`. The subscriber never receives more than it requested.
/// - Completion is sent exactly once: `.finished` when `next()` returns nil, `.failure` when it
///   throws, without waiting for demand (as Combine's own publishers and Reactive Streams §1.4
///   do): an empty sequence completes right after subscription, an exhausted one right after
///   its last element.
/// - `cancel()` is final: it cancels the iterating task (so a cancellation-aware sequence stops
///   and tears its source down) and releases the subscriber; once it has returned no
///   `receive` call starts (a call in progress on another thread is waited for), and a
///   `cancel()` from inside `receive(_:)` stops everything after it. An element fetched ahead
///   and not yet emitted is dropped.
/// - Threading: the subscriber is called one call at a time, in the isolation `publisher()` was
///   called in: on the main actor when a `@MainActor` type makes the publisher (so a `sink`
///   written there, which Swift 6 checks at run time, runs on the main actor), else on the
///   global concurrent executor. Use `receive(on:)` to hop anywhere else.
/// - `request(.none)` is reported as `BridgeDiagnostic.Kind.invalidDemand` and ignored.
/// - Elements are `Sendable`: where `next(isolation:)` is not available (below macOS 15 /
///   iOS 18), the iterator's `next()` runs off the subscriber's actor, so each element crosses
///   from one to the other.
public struct AsyncSequencePublisher<Base: AsyncSequence & Sendable, Failure: Error>: Publisher, Sendable
where Base.Element: Sendable {
    public typealias Output = Base.Element

    private let base: Base
    private let failure: @Sendable (any Error) -> Failure
    private let site: CallSite
    /// The sequence is known to end after one element (``AsyncFuture``): complete right after it,
    /// without waiting for demand to ask `next()` for the end.
    private let endsAfterOneElement: Bool
    /// Where subscribers are called: the isolation `publisher()` was called in.
    private let isolation: (any Actor)?

    init(
        _ base: Base,
        failure: @escaping @Sendable (any Error) -> Failure,
        endsAfterOneElement: Bool = false,
        isolation: (any Actor)? = nil,
        fileID: String,
        line: UInt
    ) {
        self.base = base
        self.isolation = isolation
        self.failure = failure
        self.endsAfterOneElement = endsAfterOneElement
        self.site = CallSite(fileID: fileID, line: line)
    }

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        let subscription = AsyncSequenceSubscription(
            base: base,
            subscriber: subscriber,
            failure: failure,
            endsAfterOneElement: endsAfterOneElement,
            isolation: isolation,
            site: site
        )
        subscriber.receive(subscription: subscription)
        subscription.didSubscribe()
    }
}

extension AsyncSequence where Self: Sendable, Element: Sendable {
    /// A Combine publisher over this sequence; see ``AsyncSequencePublisher``.
    ///
    /// It fails with `any Error` (whatever `next()` threw). For a sequence whose `Failure` is
    /// `Never` (where the OS's Swift runtime knows `AsyncSequence.Failure`: macOS 15, iOS 18 and
    /// later, and Linux), the more specific overload gives a publisher that never fails.
    ///
    /// - Parameters:
    ///   - isolation: Where subscribers are called; leave the default (the caller's).
    ///   - fileID: Call site reported with any misuse; leave the default.
    ///   - line: Call site reported with any misuse; leave the default.
    public func publisher(
        isolation: isolated (any Actor)? = #isolation, fileID: String = #fileID, line: UInt = #line
    ) -> AsyncSequencePublisher<Self, any Error> {
        AsyncSequencePublisher(self, failure: { $0 }, isolation: isolation, fileID: fileID, line: line)
    }

    /// The same publisher, type-erased: `sequence.eraseToAnyPublisher()` reads like Combine.
    public func eraseToAnyPublisher(
        isolation: isolated (any Actor)? = #isolation, fileID: String = #fileID, line: UInt = #line
    ) -> AnyPublisher<Element, any Error> {
        AsyncSequencePublisher(self, failure: { $0 }, isolation: isolation, fileID: fileID, line: line)
            .eraseToAnyPublisher()
    }
}

@available(BridgesTypedSequence, *)
extension AsyncSequence where Self: Sendable, Element: Sendable, Failure == Never {
    /// A Combine publisher over this sequence that never fails; see ``AsyncSequencePublisher``.
    public func publisher(
        isolation: isolated (any Actor)? = #isolation, fileID: String = #fileID, line: UInt = #line
    ) -> AsyncSequencePublisher<Self, Never> {
        AsyncSequencePublisher(
            self,
            failure: { error in
                preconditionFailure("Internal inconsistency: \(Self.self), whose Failure is Never, threw \(error)")
            }, isolation: isolation, fileID: fileID, line: line)
    }

    /// The same publisher, type-erased.
    public func eraseToAnyPublisher(
        isolation: isolated (any Actor)? = #isolation, fileID: String = #fileID, line: UInt = #line
    ) -> AnyPublisher<Element, Never> {
        publisher(isolation: isolation, fileID: fileID, line: line).eraseToAnyPublisher()
    }
}

#endif

#if canImport(Combine) || OpenCombine
// Never-failing publishers for the stream types whose failure is known without the Swift 6
// runtime's `AsyncSequence.Failure`, so they are `Never` on every OS version.

extension AsyncStream where Element: Sendable {
    /// A Combine publisher over this stream that never fails; see ``AsyncSequencePublisher``.
    public func publisher(
        isolation: isolated (any Actor)? = #isolation, fileID: String = #fileID, line: UInt = #line
    ) -> AsyncSequencePublisher<Self, Never> {
        AsyncSequencePublisher(
            self,
            failure: { error in
                preconditionFailure("Internal inconsistency: AsyncStream threw \(error)")
            }, isolation: isolation, fileID: fileID, line: line)
    }
}

extension CallbackStream where Failure == Never, Element: Sendable {
    /// A Combine publisher over this stream that never fails; see ``AsyncSequencePublisher``.
    public func publisher(
        isolation: isolated (any Actor)? = #isolation, fileID: String = #fileID, line: UInt = #line
    ) -> AsyncSequencePublisher<Self, Never> {
        AsyncSequencePublisher(
            self,
            failure: { error in
                preconditionFailure("Internal inconsistency: CallbackStream<_, Never> threw \(error)")
            }, isolation: isolation, fileID: fileID, line: line)
    }
}
#endif
