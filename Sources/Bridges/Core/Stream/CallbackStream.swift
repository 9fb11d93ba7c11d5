/// An `AsyncSequence` fed by callbacks or a delegate, with a buffering policy and a teardown.
///
/// <!-- snippet: body — in a method of a `@MainActor` view model with a legacy `manager` -->
/// ```swift
/// let locations = CallbackStream<Location, any Error>(buffering: .latest) { sink in
///     let proxy = LocationDelegate(sink)         // a DelegateProxy: the stream keeps it until teardown
///     manager.delegate = proxy
///     manager.start()
///     return Cancellation { manager.stop(); manager.delegate = nil }
/// }
/// for try await location in locations { show(location) }
/// ```
///
/// - **Cold**: the builder runs when a consumer first calls `next()` (awaited there, in the
///   isolation the builder was written in), and every iterator gets its own producer: two `for await` loops
///   never split elements between them. Use ``Broadcast`` for one hot source and many consumers.
/// - **Teardown exactly once**, whichever comes first: the producer finishes or fails (then
///   buffered elements are still delivered), the consumer breaks out or drops its iterator, or
///   the consumer's task is cancelled. Never if the builder never ran. A teardown given as
///   ``Teardown/onTermination(isolation:_:)`` learns why (``Termination``).
/// - **A loop ends after its teardown, in order**: when a `for await` exits on an actor (break,
///   return, throw, or its task's cancellation), a teardown written on that actor (a `@MainActor`
///   view model's builder) has run before the next statement, so the same source can be started
///   again at once; a teardown written on another actor runs there before any stream builder
///   that actor runs next; one written in nonisolated code runs on the thread that ended the
///   stream, before the loop ends.
///   (An iterator kept outside a `for await` and released off its actor, by an object's
///   deinit: Bridges enqueues a main-actor teardown on the main actor; another actor's runs
///   where the iterator is released.)
/// - **A cancel is final when it is made**: once the consumer's task is cancelled while it waits
///   in `next()`, the stream has ended as `.cancelled`, whatever the producer does next: `yield`
///   answers `.terminated`, `finish()` or a released sink change nothing, an element just handed
///   to the consumer whose task has not run yet is undelivered, and the teardown starts at once
///   (a nonisolated one on Bridges' teardown queue, without waiting for the consumer's task to be
///   scheduled; one written on an actor, enqueued there). A consumer running its loop body when
///   its task is cancelled ends the stream at its next `next()`.
/// - **Accounting**: `onUndelivered` sees every element produced and not delivered, with its
///   ``UndeliveredReason``: delivered + undelivered == produced, whoever ends the stream.
/// - **Lifetime**: what the teardown captures, and every ``DelegateProxy`` made from the
///   stream's sink (or object given to ``Sink/keepUntilTeardown(_:)``), is retained until the
///   teardown has run, then released.
/// - **Cancellation never reads as completion**: a cancelled consumer task ends the iteration at
///   its next `next()` (or in the one it waits in), discarding what was buffered (reported to
///   `onUndelivered` as `.cancelled`). That `next()` throws `CancellationError` when `Failure`
///   can hold it (`any Error`), so a loop cut short never looks finished; a stream that cannot
///   throw it returns `nil`: `Failure == Never`, like `AsyncStream`, and a concrete `Failure`
///   (`throws(Failure)` cannot throw another type: check `Task.isCancelled` after such a loop,
///   or use `any Error`). A stream that had already ended (its producer finished with nothing
///   left to deliver) ends with `nil`. Suspended `await send`s are resumed with `.terminated`;
///   a cancelled `await send` keeps its element's place in line.
/// - **Isolation**: `next(isolation:)` returns buffered elements without suspending, so a
///   `@MainActor` consumer drains the buffer without leaving the main actor.
/// - **Misuse** (yield after finish, two tasks iterating one iterator, a sink released without
///   `finish()`) is reported through ``Diagnostics`` with this initializer's call site.
///
/// `Failure == Never` iterates with `for await`, any other failure with `for try await`, and the
/// thrown error keeps its type.
public struct CallbackStream<Element, Failure: Error>: AsyncSequence {
    /// The builder's type. An `@isolated(any)` function type: store it in a property or pass it
    /// as a parameter; as a generic argument (`[Builder]`, `Box<Builder>`) or converted to `Any`
    /// its runtime metadata needs macOS 15 / iOS 18 / tvOS 18 / watchOS 11 / visionOS 2.
    public typealias Builder = @Sendable @isolated(any) (Sink) -> Cancellation
    /// Called with every element produced and not delivered, and why. See ``UndeliveredReason``.
    public typealias UndeliveredHandler = @Sendable (Element, UndeliveredReason) -> Void
    /// The builder as the engine stores it: both public forms end up here, as a plain async
    /// function that calls the user's builder in its isolation. (Not `@isolated(any)` itself:
    /// the state machine takes it as a generic argument, and such a function type there needs
    /// the Swift 6 runtime, iOS 18.)
    /// It runs in the consumer's isolation (its `isolated` parameter), so a builder written on the
    /// consumer's own actor runs without a hop.
    /// Bridges' own streams (`Broadcast`, `shared()`, the operators, the Foundation and Combine
    /// adapters) pass a synchronous builder that runs at once in the consumer's `next()`.
    @usableFromInline enum AnyBuilder: Sendable {
        case isolated(@Sendable (Sink, isolated (any Actor)?) async -> Teardown)
        case synchronous(@Sendable (Sink) -> Teardown)
    }

    @usableFromInline let policy: BufferingPolicy
    /// `onDrop` and `onUndelivered` merged into one hook (nil when neither was given).
    @usableFromInline let undelivered: UndeliveredHandler?
    @usableFromInline let site: CallSite
    @usableFromInline let build: AnyBuilder

    /// Creates a cold stream whose producer `build` starts for each iterator.
    ///
    /// - Parameters:
    ///   - buffering: What happens to elements the consumer has not taken yet. See ``BufferingPolicy``.
    ///   - onDrop: Called with every element the policy drops, on the thread that yielded (for
    ///     `.latest`/`.dropOldest`, with the *old* element that made room).
    ///   - onUndelivered: Called with every element that was produced and will never be
    ///     delivered, with the reason: dropped by the policy (on the yielding thread), discarded
    ///     because the consumer ended while it was buffered or being sent (on the thread that
    ///     ended it, after the teardown), or yielded after the end (on the yielding thread). So
    ///     delivered + undelivered == produced, whoever ends the stream. Never under a lock.
    ///   - build: Starts the producer with a ``Sink`` and returns the teardown that stops it. Runs
    ///     once per iterator, awaited by its first `next()`, in the isolation it was written in: a
    ///     builder written in a `@MainActor` view model runs on the main actor and may capture its
    ///     non-`Sendable` state (a legacy manager), and the ``Cancellation`` it returns runs there
    ///     too. A builder written in nonisolated code must be `Sendable` and runs off any actor.
    ///   - line: Call site reported with any misuse; leave the default.
    ///   - fileID: Call site reported with any misuse; leave the default.
    @inlinable
    public init(
        buffering: BufferingPolicy = .unbounded,
        onDrop: (@Sendable (Element) -> Void)? = nil,
        onUndelivered: UndeliveredHandler? = nil,
        fileID: String = #fileID,
        line: UInt = #line,
        @_inheritActorContext _ build: @escaping @Sendable @isolated(any) (Sink) -> Cancellation
    ) {
        self.init(
            buffering: buffering, onDrop: onDrop, onUndelivered: onUndelivered,
            site: CallSite(fileID: fileID, line: line),
            .isolated { sink, _ in Teardown(await Self.start(build, sink, on: build.isolation)) }
        )
    }

    /// Creates a cold stream whose teardown learns why the stream ended.
    ///
    /// <!-- snippet: body — in a method of a `@MainActor` view model with `observe(onChange:onError:)` and `log` -->
    /// ```swift
    /// let rows = CallbackStream<[Row], any Error> { sink in
    ///     let observation = observe(onChange: { sink.yield($0) }, onError: { sink.finish(throwing: $0) })
    ///     return .onTermination { termination in
    ///         observation.cancel()
    ///         if case .failed(let error) = termination { log.error("observation failed: \(error)") }
    ///     }
    /// }
    /// ```
    ///
    /// The same as `init(buffering:onDrop:onUndelivered:fileID:line:_:)` whose builder returns a `Cancellation`
    /// otherwise: the teardown runs exactly once, and before the consumer's loop ends.
    @inlinable
    public init(
        buffering: BufferingPolicy = .unbounded,
        onDrop: (@Sendable (Element) -> Void)? = nil,
        onUndelivered: UndeliveredHandler? = nil,
        fileID: String = #fileID,
        line: UInt = #line,
        @_inheritActorContext _ build: @escaping @Sendable @isolated(any) (Sink) -> Teardown
    ) {
        self.init(
            buffering: buffering, onDrop: onDrop, onUndelivered: onUndelivered,
            site: CallSite(fileID: fileID, line: line),
            .isolated { sink, _ in await Self.start(build, sink, on: build.isolation) }
        )
    }

    /// Runs a user's builder on the actor it was written on (`actor`, its isolation), after that
    /// actor has run the teardowns of earlier streams still enqueued there (``ActorTeardowns``):
    /// a source started again on the actor it was stopped on is stopped first.
    @usableFromInline
    static func start(
        _ build: @Sendable @isolated(any) (Sink) -> Cancellation, _ sink: Sink, on actor: isolated (any Actor)?
    ) async -> Cancellation {
        if let actor { ActorTeardowns.runAll(on: actor) }
        return await build(sink)
    }

    /// ``start(_:_:on:)-(_,_,_)`` for a builder that returns a ``Teardown``.
    @usableFromInline
    static func start(
        _ build: @Sendable @isolated(any) (Sink) -> Teardown, _ sink: Sink, on actor: isolated (any Actor)?
    ) async -> Teardown {
        if let actor { ActorTeardowns.runAll(on: actor) }
        return await build(sink)
    }

    /// A stream whose builder runs synchronously in the consumer's first `next()`: Bridges' own
    /// streams, whose builders are `Sendable` and use no actor's state.
    @inlinable
    package static func synchronous(
        buffering: BufferingPolicy = .unbounded,
        onDrop: (@Sendable (Element) -> Void)? = nil,
        onUndelivered: UndeliveredHandler? = nil,
        fileID: String = #fileID,
        line: UInt = #line,
        _ build: @escaping @Sendable (Sink) -> Cancellation
    ) -> Self {
        Self(
            buffering: buffering, onDrop: onDrop, onUndelivered: onUndelivered,
            site: CallSite(fileID: fileID, line: line), .synchronous { Teardown(build($0)) })
    }

    /// The ``synchronous(buffering:onDrop:onUndelivered:fileID:line:_:)-(_,_,_,_,_,(Sink)->Cancellation)``
    /// form whose builder returns a ``Teardown``.
    @inlinable
    package static func synchronous(
        buffering: BufferingPolicy = .unbounded,
        onDrop: (@Sendable (Element) -> Void)? = nil,
        onUndelivered: UndeliveredHandler? = nil,
        fileID: String = #fileID,
        line: UInt = #line,
        _ build: @escaping @Sendable (Sink) -> Teardown
    ) -> Self {
        Self(
            buffering: buffering, onDrop: onDrop, onUndelivered: onUndelivered,
            site: CallSite(fileID: fileID, line: line), .synchronous(build))
    }

    @inlinable
    init(
        buffering: BufferingPolicy,
        onDrop: (@Sendable (Element) -> Void)?,
        onUndelivered: UndeliveredHandler?,
        site: CallSite,
        _ build: AnyBuilder
    ) {
        self.policy = buffering
        switch (onDrop, onUndelivered) {
        case (nil, nil):
            self.undelivered = nil
        case (let onDrop?, nil):
            self.undelivered = { element, reason in if reason == .dropped { onDrop(element) } }
        case (nil, let onUndelivered?):
            self.undelivered = onUndelivered
        case (let onDrop?, let onUndelivered?):
            self.undelivered = { element, reason in
                if reason == .dropped { onDrop(element) }
                onUndelivered(element, reason)
            }
        }
        self.site = site
        self.build = build
    }

    @inlinable
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            ConsumerToken(CallbackStreamStorage(policy: policy, builder: build, undelivered: undelivered, site: site)))
    }

    /// Why a stream ended, as its ``Teardown`` learns it.
    public enum Termination {
        /// The producer called ``Sink/finish(fileID:line:)`` (or released its sink without finishing).
        case finished
        /// The producer called ``Sink/finish(throwing:fileID:line:)`` with this error.
        case failed(Failure)
        /// The consumer ended it: it broke out of its loop, dropped its iterator, or its task was
        /// cancelled.
        case cancelled
    }

    /// What stops the producer when the stream ends: a ``Cancellation`` (today's form), or a
    /// handler that learns why (``onTermination(isolation:_:)``). Runs exactly once, never under a
    /// lock, and before the consumer's loop ends. Made in nonisolated code it runs on the thread
    /// that ended the stream; made on an actor (a `@MainActor` view model's builder) it runs on
    /// that actor: run by the consumer itself when it iterates there, else enqueued there.
    public struct Teardown: Sendable {
        @usableFromInline
        enum Kind: Sendable {
            case cancellation(Cancellation)
            case handler(@Sendable (Termination) -> Void)
            case isolatedHandler(IsolatedHandler)
            /// A teardown, and objects its stream keeps alive until it has run (delegate proxies).
            case keeping(Kept)
        }

        /// A handler made in an actor's isolation, with that actor: it may capture the actor's
        /// non-`Sendable` state, and runs only there. A class, so that `Kind` stays two words and
        /// the stream's state its size.
        @usableFromInline
        final class IsolatedHandler: @unchecked Sendable {
            // @unchecked Sendable: `handler` is called only on `isolation`, the actor whose region
            // it was made in (`run` enqueues it there, as `Cancellation.cancel()` does an action).
            @usableFromInline let handler: (Termination) -> Void
            @usableFromInline let isolation: any Actor

            @usableFromInline
            init(_ handler: @escaping (Termination) -> Void, isolation: any Actor) {
                self.handler = handler
                self.isolation = isolation
            }
        }

        /// A teardown and the objects the stream keeps alive until it has run: a delegate proxy
        /// made from the stream's sink (``DelegateProxy``), which its manager holds `weak`ly. Read
        /// and written under the stream's lock only; released with the teardown, after it ran.
        @usableFromInline
        final class Kept: @unchecked Sendable {
            // @unchecked Sendable: `objects` is only touched under the lock of the one stream whose
            // state holds this object, and the objects are only kept alive, never used.
            @usableFromInline let teardown: Teardown?
            @usableFromInline var objects: [AnyObject]

            @usableFromInline
            init(_ teardown: Teardown?, _ objects: [AnyObject]) {
                self.teardown = teardown
                self.objects = objects
            }

            /// `kept` with `object` added (a new box when there was none).
            @usableFromInline
            static func adding(_ object: AnyObject, to kept: Kept?) -> Kept {
                guard let kept else { return Kept(nil, [object]) }
                kept.objects.append(object)
                return kept
            }
        }

        @usableFromInline let kind: Kind

        /// A teardown that cancels `cancellation` whatever the reason.
        @inlinable
        public init(_ cancellation: Cancellation) { kind = .cancellation(cancellation) }

        @inlinable
        init(kind: Kind) { self.kind = kind }

        /// A teardown that receives why the stream ended: `.finished`, `.failed(error)` or `.cancelled`.
        ///
        /// Made on an actor (a stream builder written in a `@MainActor` view model), the handler
        /// runs on that actor and may capture its non-`Sendable` state (a legacy manager): a loop
        /// that ends on that actor has run it before its next statement. Made in nonisolated
        /// code, it must be `Sendable` or own what it captures, and runs on the thread that ended
        /// the stream, before the consumer's loop ends.
        ///
        /// - Parameters:
        ///   - isolation: The actor the handler belongs to (filled in by `#isolation`); leave the default.
        ///   - handler: Receives why the stream ended.
        @inlinable
        public static func onTermination(
            isolation: isolated (any Actor)? = #isolation,
            _ handler: @escaping (Termination) -> Void
        ) -> Teardown {
            guard let isolation else {
                // Nonisolated: the handler was made where nothing else runs it (as `Cancellation`'s
                // nonisolated action is), so it may run on the thread that ends the stream.
                return Teardown(kind: .handler(UnsafeHandler(handler).call))
            }
            return Teardown(kind: .isolatedHandler(IsolatedHandler(handler, isolation: isolation)))
        }

        /// A nonisolated handler, called wherever the stream ends (see ``onTermination(isolation:_:)``).
        @usableFromInline
        struct UnsafeHandler: @unchecked Sendable {
            @usableFromInline let handler: (Termination) -> Void
            @usableFromInline init(_ handler: @escaping (Termination) -> Void) { self.handler = handler }
            @usableFromInline func call(_ termination: Termination) { handler(termination) }
        }

        /// Runs the teardown on this thread. The caller is where it may run: anywhere for one made
        /// in nonisolated code, else on the actor it was made on (``isolation``), whose
        /// non-`Sendable` state it may touch.
        @usableFromInline
        func runHere(_ termination: Termination) {
            switch kind {
            case .cancellation(let cancellation): cancellation.cancelHere()
            case .handler(let handler): handler(termination)
            case .isolatedHandler(let handler): handler.handler(termination)
            case .keeping(let kept): kept.teardown?.runHere(termination)
            }
        }

        /// The actor the teardown was made on, where it runs; nil for one made in nonisolated code
        /// (or a ``Cancellation`` already cancelled, which has nothing left to run).
        @usableFromInline
        var isolation: (any Actor)? {
            switch kind {
            case .cancellation(let cancellation): cancellation.pendingIsolation
            case .handler: nil
            case .isolatedHandler(let handler): handler.isolation
            case .keeping(let kept): kept.teardown?.isolation
            }
        }

        /// This teardown, keeping `object` alive until it has run (under the stream's lock).
        @usableFromInline
        func keeping(_ object: AnyObject) -> Teardown {
            if case .keeping(let kept) = kind {
                kept.objects.append(object)
                return self
            }
            return Teardown(kind: .keeping(Kept(self, [object])))
        }

        /// This teardown, keeping what `kept` holds (the builder's proxies) alive until it has run.
        @usableFromInline
        func keeping(_ kept: Kept?) -> Teardown {
            guard let kept else { return self }
            return Teardown(kind: .keeping(Kept(self, kept.objects)))
        }
    }

    /// What a synchronous ``Sink/yield(_:fileID:line:)`` (or ``Sink/send(_:isolation:fileID:line:)``) did with the element.
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
        /// `actor`. The first call runs the builder. If the calling task is cancelled before the
        /// stream ended, ends the stream (teardown) and throws `CancellationError` where
        /// `Failure` can hold it (`any Error`), else returns `nil` (`Never`, a concrete error
        /// type); later calls return `nil`. If another task is already suspended on this
        /// iterator, reports `.concurrentIteration` and returns `nil` to the second caller.
        @inlinable @inline(__always)
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(Failure) -> Element? {
            // Fast path, inlined into the caller: a buffered element with nothing else to do is
            // taken under one lock pair, without an async call frame or an executor hop.
            // Everything else (the first call, waiting, the end, cancellation) is out of line.
            if !Task.isCancelled {
                let action = consumer._takeBufferedOrNext()
                if case .element(let element, nil, nil) = action { return element }
                return try await _next(isolation: actor, action)
            }
            return try await _next(isolation: actor, nil)
        }

        /// The rest of `next(isolation:)`: `first` is the action the fast path got from the state
        /// machine (nil: the task is cancelled).
        @inlinable @inline(never)
        mutating func _next(
            isolation actor: isolated (any Actor)?,
            _ first: CallbackStreamStorage<Element, Failure>.Machine.NextAction?
        ) async throws(Failure) -> Element? {
            let storage = consumer.storage
            var action: CallbackStreamStorage<Element, Failure>.Machine.NextAction
            if let first {
                action = first
            } else {
                storage.terminateConsumer(cancelled: true)
                action = storage.decideNext()  // `.cancelled`, unless it had ended already
            }
            while true {
                switch action {
                case .element(let element, let sender, let demand):
                    sender?.resume(returning: Handoff(.enqueued))
                    demand?.report()
                    return element
                case .end(let failure):
                    if let failure { throw failure }
                    return nil
                case .cancelled:
                    return try Self.cancelled()
                case .runBuilder(let builder):
                    await storage.runBuilder(builder, isolation: actor)
                case .teardown(let work):
                    // Enqueued on this actor when the stream ended elsewhere: run it before the
                    // loop ends rather than wait for that job.
                    storage.perform(work)
                case .askProducer(let demand):
                    // Rendezvous pull source: ask for the element, then look again; a source
                    // that answers synchronously never makes the consumer suspend.
                    demand.report()
                case .suspend:
                    let wakeUp = await storage.suspend(isolation: actor)
                    if let element = try wakeUp.result.get() {
                        // Handed an element, and cancelled by now: if the cancellation ended the
                        // stream meanwhile, the element is undelivered and the loop ends as
                        // cancelled, after the teardown its cancellation handler started.
                        if Task.isCancelled, storage.revokeHandedElement(element) {
                            action = storage.decideNext()
                            continue
                        }
                        wakeUp.demand?.report()
                        return element
                    }
                    // The end, or the cancellation that resumed this wait.
                    switch storage.decideWokenWithNil() {
                    case .teardown(let work):
                        storage.perform(work)
                        action = storage.decideNext()
                        continue
                    case .askAgain:
                        action = storage.decideNext()
                        continue
                    case .cancelled:
                        return try Self.cancelled()
                    case .end(let failure):
                        if let failure { throw failure }
                        return nil
                    }
                }
                action = storage.decideNextAskingBeforeSuspending()
            }
        }

        /// The end of a consumer whose task was cancelled before the stream ended: throws
        /// `CancellationError` where `Failure` can hold it (`any Error`, `CancellationError`),
        /// else returns nil (`Never`, or a concrete error type, which a `throws(Failure)`
        /// function cannot throw it as).
        @inlinable
        static func cancelled() throws(Failure) -> Element? {
            if let error = CancellationError() as? Failure { throw error }
            return nil
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
extension CallbackStream.Termination: Sendable {}

extension ConsumerToken {
    /// One lock pair: a buffered element to return at once, or `next()`'s action. A method on
    /// the token (not `consumer.storage…` in the iterator), so the storage is borrowed from the
    /// token instead of retained and released around every element.
    @inlinable @inline(__always)
    func _takeBufferedOrNext() -> CallbackStreamStorage<Element, Failure>.Machine.NextAction {
        storage.decideTakeBufferedOrNext()
    }
}

/// Why an element that was produced was not delivered, as `onUndelivered` learns it.
public enum UndeliveredReason: Sendable, Hashable, CustomStringConvertible {
    /// The buffering policy dropped it (also passed to `onDrop` and counted in `droppedCount`).
    case dropped
    /// The consumer ended the stream (cancelled, broke out, dropped its iterator) while it was
    /// buffered or while its `await send` was waiting.
    case cancelled
    /// It was yielded after the stream had ended (the yield answered `.terminated`).
    case terminated

    public var description: String {
        switch self {
        case .dropped: ".dropped"
        case .cancelled: ".cancelled"
        case .terminated: ".terminated"
        }
    }
}
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
