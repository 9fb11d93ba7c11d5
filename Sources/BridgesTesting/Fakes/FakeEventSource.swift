/// A legacy multi-shot source (an observer API, a delegate that receives many calls) that the
/// test drives, recording subscriptions and teardowns.
///
/// The code under test registers with ``subscribe(onEvent:onCompletion:)`` and gets a
/// `Cancellation` back, the shape of `addObserver`/`removeObserver`, of a delegate set and
/// reset, or of a callback registration API:
///
/// <!-- snippet: test -->
/// ```swift
/// let source = FakeEventSource<Location>()
/// let locations = CallbackStream<Location, any Error>(buffering: .unbounded) { sink in
///     source.subscribe(
///         onEvent: { _ = sink.yield($0) },
///         onCompletion: { error in if let error { sink.finish(throwing: error) } else { sink.finish() } }
///     )
/// }
/// let recorder = locations.record()
/// let subscription = try await source.nextSubscription()
/// source.yield(paris)
/// #expect(try await recorder.next() == paris)
/// recorder.cancel()
/// await subscription.waitForTeardown()            // the stream tore the source down
/// ```
///
/// `yield`, `finish()` and `finish(throwing:)` call the handlers synchronously, on the calling thread, once per
/// active subscriber, in subscription order. A subscription stops receiving events when it is
/// torn down or after `finish()`/`finish(throwing:)`; either way the source then releases its handlers.
public final class FakeEventSource<Element: Sendable>: Sendable {
    public typealias EventHandler = @Sendable (Element) -> Void
    /// Called once at the end: `nil` for finished, the error for failed.
    public typealias CompletionHandler = @Sendable ((any Error)?) -> Void

    /// One registration made by the code under test.
    public final class Subscription: Sendable, CustomStringConvertible {
        private struct Handlers {
            var onEvent: EventHandler
            var onCompletion: CompletionHandler
        }

        /// The position of this subscription among all subscriptions, from 0.
        public let index: Int
        private let handlers: LockedState<Handlers?>
        private let teardown = Gate()

        init(index: Int, onEvent: @escaping EventHandler, onCompletion: @escaping CompletionHandler) {
            self.index = index
            handlers = LockedState(Handlers(onEvent: onEvent, onCompletion: onCompletion))
        }

        /// Still receiving events: neither torn down nor completed.
        public var isActive: Bool { handlers.withLock { $0 != nil } }
        /// The code under test ran this subscription's `Cancellation`.
        public var isTornDown: Bool { teardown.isOpen }
        public var description: String { "subscription #\(index)" }

        /// Waits until the code under test tears this subscription down; returns `false` (and
        /// records a test failure) if it does not within `timeout` of real time.
        @available(BridgesClock, *)
        @discardableResult
        public func waitForTeardown(
            timeout: Duration = .seconds(5), fileID: String = #fileID, line: UInt = #line
        ) async -> Bool {
            if await teardown.wait(atMost: timeout) { return true }
            _reportTestFailure("\(self) was not torn down within \(timeout)", fileID: fileID, line: line)
            return false
        }

        func offer(_ element: Element) -> Bool {
            guard let onEvent = handlers.withLock({ $0?.onEvent }) else { return false }
            onEvent(element)
            return true
        }

        func complete(_ error: (any Error)?) {
            let handlers = handlers.withLock { handlers in
                defer { handlers = nil }
                return handlers
            }
            handlers?.onCompletion(error)
        }

        func tearDown() -> Bool {
            handlers.withLock { $0 = nil }
            guard !teardown.isOpen else { return false }
            teardown.open()
            return true
        }
    }

    private let arrivals = Arrivals<Subscription>()
    private let teardowns = LockedState(0)

    public init() { XCTestFailureRecorder.start() }

    // MARK: - Called by the code under test

    /// Registers handlers; events flow until the returned token is cancelled or the source
    /// completes. Thread-safe.
    public func subscribe(
        onEvent: @escaping EventHandler,
        onCompletion: @escaping CompletionHandler = { _ in }
    ) -> Cancellation {
        let subscription = arrivals.append { Subscription(index: $0, onEvent: onEvent, onCompletion: onCompletion) }
        return Cancellation { [teardowns, subscription] in
            if subscription.tearDown() { teardowns.withLock { $0 += 1 } }
        }
    }

    // MARK: - Driven and inspected by the test

    /// Delivers `element` to every active subscriber; returns how many received it.
    @discardableResult
    public func yield(_ element: Element) -> Int {
        arrivals.all.reduce(0) { count, subscription in count + (subscription.offer(element) ? 1 : 0) }
    }

    /// Ends every active subscription normally.
    public func finish() {
        for subscription in arrivals.all { subscription.complete(nil) }
    }

    /// Ends every active subscription with `error`.
    public func finish(throwing error: any Error) {
        for subscription in arrivals.all { subscription.complete(error) }
    }

    /// Every subscription so far, in order.
    public var subscriptions: [Subscription] { arrivals.all }
    /// Subscriptions currently receiving events.
    public var subscriberCount: Int { subscriptions.filter(\.isActive).count }
    /// How many times anyone subscribed.
    public var subscribeCount: Int { subscriptions.count }
    /// How many subscriptions were torn down (each counts once, however often it is cancelled).
    public var teardownCount: Int { teardowns.withLock { $0 } }

    /// The next subscription the test has not yet taken, waiting until the code under test
    /// subscribes: the deterministic way to know that the source is being listened to.
    ///
    /// - Throws: ``FakeTimeout`` (after recording a test failure) if nobody subscribes within
    ///   `timeout` of real time.
    @available(BridgesClock, *)
    public func nextSubscription(
        timeout: Duration = .seconds(5), fileID: String = #fileID, line: UInt = #line
    ) async throws -> Subscription {
        if let subscription = await arrivals.next(timeout: timeout) { return subscription }
        let message = "expected the code under test to subscribe (subscription #\(subscribeCount)) within \(timeout)"
        _reportTestFailure(message, fileID: fileID, line: line)
        throw FakeTimeout(message)
    }
}
