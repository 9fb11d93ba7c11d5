/// An `AsyncSequence` fed by callbacks or a delegate, with a buffering policy and a teardown.
///
/// ```swift
/// let locations = CallbackStream<Location, any Error>(buffering: .latest) { sink in
///     let proxy = LocationDelegate(sink)         // retained by the stream until teardown
///     manager.delegate = proxy
///     manager.start()
///     return Cancellation { manager.stop(); manager.delegate = nil; _ = proxy }
/// }
/// for try await location in locations { … }
/// ```
///
/// - **Cold**: the builder runs when a consumer first calls `next()` (in the consumer's
///   isolation, synchronously), and every iterator gets its own producer: two `for await` loops
///   never split elements between them. Use ``Broadcast`` for one hot source and many consumers.
/// - **Teardown exactly once**, on the thread that ends the stream, whichever comes first: the
///   producer finishes or fails (then buffered elements are still delivered), the consumer
///   breaks out or drops its iterator, or the consumer's task is cancelled. Never if the builder
///   never ran.
/// - **Lifetime**: what the teardown captures (a delegate proxy) is retained until the teardown
///   has run, then released.
/// - **Cancellation**: a cancelled consumer task ends the iteration at its next `next()` (which
///   returns `nil`, like `AsyncStream`), discarding what was buffered.
/// - **Isolation**: `next(isolation:)` returns buffered elements without suspending, so a
///   `@MainActor` consumer drains the buffer without leaving the main actor.
/// - **Misuse** (yield after finish, two tasks iterating one iterator, a sink released without
///   `finish()`) is reported through ``Diagnostics`` with this initializer's call site.
///
/// `Failure == Never` iterates with `for await`, any other failure with `for try await`, and the
/// thrown error keeps its type.
public struct CallbackStream<Element, Failure: Error>: AsyncSequence {
    public typealias Builder = @Sendable (Sink) -> Cancellation

    @usableFromInline let policy: BufferingPolicy
    @usableFromInline let onDrop: (@Sendable (Element) -> Void)?
    @usableFromInline let site: CallSite
    @usableFromInline let build: Builder

    /// Creates a cold stream whose producer `build` starts for each iterator.
    ///
    /// - Parameters:
    ///   - buffering: What happens to elements the consumer has not taken yet. See ``BufferingPolicy``.
    ///   - onDrop: Called with every element the policy drops, on the thread that yielded (for
    ///     `.latest`/`.dropOldest`, with the *old* element that made room).
    ///   - build: Starts the producer with a ``Sink`` and returns the teardown that stops it. Runs
    ///     once per iterator, on its first `next()`, synchronously in the consumer's isolation.
    ///   - line: Call site reported with any misuse; leave the default.
    ///   - fileID: Call site reported with any misuse; leave the default.
    @inlinable
    public init(
        buffering: BufferingPolicy = .unbounded,
        onDrop: (@Sendable (Element) -> Void)? = nil,
        fileID: String = #fileID,
        line: UInt = #line,
        _ build: @escaping @Sendable (Sink) -> Cancellation
    ) {
        self.policy = buffering
        self.onDrop = onDrop
        self.site = CallSite(fileID: fileID, line: line)
        self.build = build
    }

    @inlinable
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(ConsumerToken(CallbackStreamStorage(policy: policy, builder: build), onDrop: onDrop, site: site))
    }

    /// What a synchronous ``Sink/yield(_:)`` (or ``Sink/send(_:isolation:)``) did with the element.
    public enum YieldResult {
        /// Buffered or handed to the consumer; the producer may go on.
        case enqueued
        /// The policy dropped this element (for `.latest`/`.dropOldest`, the *old* element that
        /// made room). It was also passed to `onDrop` and counted in ``Sink/droppedCount``.
        case dropped(Element)
        /// Enqueued under a waiting policy, but the buffer is now full: a pausable source should
        /// pause until ``Sink/onDemand(_:)`` tells it the consumer can take more.
        case stopProducing
        /// The stream is over (the consumer went away, or the producer finished); the element
        /// was discarded. Stop producing and let the teardown clean up.
        case terminated
    }

    /// Iterates one producer. Use it from one task at a time.
    public struct AsyncIterator: AsyncIteratorProtocol {
        @usableFromInline let consumer: ConsumerToken<Element, Failure>

        @inlinable
        init(_ consumer: ConsumerToken<Element, Failure>) { self.consumer = consumer }

        /// The next element, or `nil` at the end; throws the producer's failure.
        ///
        /// Buffered elements are returned without suspending, so the caller never leaves
        /// `actor`. The first call runs the builder. If the calling task is cancelled, returns
        /// `nil` and ends the stream (teardown). If another task is already suspended on this
        /// iterator, reports `.concurrentIteration` and returns `nil` to the second caller.
        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(Failure) -> Element? {
            let storage = consumer.storage
            if Task.isCancelled {
                storage.terminateConsumer()
                return nil
            }
            while true {
                switch storage.state.withLock({ $0.next() }) {
                case .element(let element, let sender, let demand):
                    sender?.resume(returning: Handoff(.enqueued))
                    demand?(1)
                    return element
                case .end(let failure):
                    if let failure { throw failure }
                    return nil
                case .runBuilder(let builder):
                    storage.runBuilder(builder, onDrop: consumer.onDrop, site: consumer.site)
                case .suspend:
                    let delivery = await storage.suspend(isolation: actor, site: consumer.site)
                    delivery.demand?(1)
                    return try delivery.result.get()
                }
            }
        }

        /// The non-isolated form: called directly from an actor it runs off that actor (one hop
        /// there and back per call). `for await` and ``next(isolation:)`` stay on the caller's actor.
        @inlinable
        public mutating func next() async throws(Failure) -> Element? {
            try await next(isolation: nil)
        }
    }
}

@available(*, unavailable, message: "A CallbackStream iterator must be used by one task at a time")
extension CallbackStream.AsyncIterator: Sendable {}

// A stream holds no elements, only its policy, call site and Sendable closures: any number of
// tasks may iterate it (each gets its own producer).
extension CallbackStream: Sendable {}

extension CallbackStream.YieldResult: Sendable where Element: Sendable {}
extension CallbackStream.YieldResult: Equatable where Element: Equatable {}
extension CallbackStream.YieldResult: Hashable where Element: Hashable {}

extension CallbackStream.YieldResult: CustomStringConvertible {
    public var description: String {
        switch self {
        case .enqueued: ".enqueued"
        case .dropped(let element): ".dropped(\(element))"
        case .stopProducing: ".stopProducing"
        case .terminated: ".terminated"
        }
    }
}
