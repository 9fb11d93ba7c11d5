extension CallbackStream {
    /// The producer's end of one iteration of a ``CallbackStream``: yield elements, then finish.
    ///
    /// Sendable: call it from any thread, any number of producers. Hold it (in a delegate proxy,
    /// a callback) for as long as the producer runs; if every copy is released without
    /// ``finish(fileID:line:)``, the stream finishes and reports `.sinkDropped`, so that its consumer
    /// never waits forever.
    public struct Sink: Sendable {
        @usableFromInline let token: SinkToken<Element, Failure>

        @inlinable
        init(_ token: SinkToken<Element, Failure>) { self.token = token }

        /// Offers `element` to the consumer, synchronously; never blocks and never suspends.
        ///
        /// - Returns: `.enqueued`; `.dropped(e)` when a lossy policy dropped `e` (also passed to
        ///   `onDrop`); `.stopProducing` under a waiting policy whose buffer is now full (the
        ///   element *was* enqueued: nothing is lost; pause until ``onDemand(_:)`` says so);
        ///   `.terminated` when the stream is over (after ``finish(fileID:line:)`` this is also
        ///   reported once as `.yieldAfterFinish`, at this call's `fileID`/`line`).
        @inlinable
        @discardableResult
        public func yield(_ element: sending Element, fileID: String = #fileID, line: UInt = #line) -> YieldResult {
            let action = token.storage.decideYield(element)
            // Enqueued (the common case): nothing to act on, no handler or call site to copy.
            if case .answer(let result) = action { return result }
            return token.storage.act(action, fileID: fileID, line: line)
        }

        /// Offers `element` to the consumer; under a waiting policy (``BufferingPolicy/rendezvous``,
        /// ``BufferingPolicy/suspending(_:fileID:line:)``) suspends until it is accepted: for `.rendezvous` until
        /// the consumer has taken it, for `.suspending(n)` until it fits in the buffer. Under
        /// other policies it returns at once, like ``yield(_:fileID:line:)``.
        ///
        /// - Returns: `.enqueued` once accepted, `.dropped`/`.terminated` as for ``yield(_:fileID:line:)``.
        ///   If the sending task is cancelled while suspended, the element is enqueued anyway
        ///   (nothing is lost) and the result is `.stopProducing`.
        @inlinable
        public func send(
            _ element: sending Element,
            isolation: isolated (any Actor)? = #isolation,
            fileID: String = #fileID,
            line: UInt = #line
        ) async -> YieldResult {
            await token.storage.send(element, isolation: isolation, fileID: fileID, line: line)
        }

        /// Ends the stream normally: the consumer receives what is buffered, then `nil` (after the
        /// teardown has returned). The teardown runs now, on this thread. A second call is
        /// ignored and reported as `.finishCalledTwice`, at its own `fileID`/`line`.
        @inlinable
        public func finish(fileID: String = #fileID, line: UInt = #line) {
            token.storage.finish(nil, fileID: fileID, line: line)
        }

        /// Ends the stream with `error`: the consumer receives what is buffered, then `error` is
        /// thrown (after the teardown has returned). The teardown runs now, on this thread, and
        /// learns `.failed(error)` if it was given as `.onTermination`. After the consumer ended
        /// the stream, the error reaches nobody: that is reported, at this call's `fileID`/`line`.
        @inlinable
        public func finish(throwing error: Failure, fileID: String = #fileID, line: UInt = #line) {
            token.storage.finish(error, fileID: fileID, line: line)
        }

        /// Whether the stream is over (finished by the producer, or ended by the consumer);
        /// yields now answer `.terminated`.
        public var isTerminated: Bool {
            token.storage.isTerminated
        }

        /// How many elements the policy has dropped so far.
        public var droppedCount: Int {
            token.storage.droppedCount
        }

        /// Registers `handler`, told how many more elements the consumer can take (credits), so
        /// a pausable source (a `FileHandle`, a `DispatchSource`, a socket, a Combine
        /// subscription) produces only what is wanted. Demand comes from the buffer's depth: it
        /// is reported only when there is room, and never more than the room (an element
        /// yielded beyond the credit uses none, so the sum of what was reported minus what was
        /// yielded never exceeds the free buffer). It replaces any handler registered before,
        /// and is called never while a lock is held, on the thread named below:
        ///
        /// - `.suspending(n)`: once at registration with the room left (n when nothing is
        ///   buffered), on this thread; then, on the consumer's thread as it takes elements,
        ///   with the room that appeared and was not reported yet.
        /// - `.watermark(low:high:)`: the same, but only once the depth is down to `low`.
        /// - `.rendezvous`: with 1 when the consumer calls `next()` and nothing is buffered, on
        ///   the consumer's thread, just before it suspends (and at registration if it is
        ///   already waiting).
        /// - lossy and unbounded policies: once, at registration, with `Int.max`; the stream then
        ///   keeps no reference to the handler.
        ///
        /// After `.stopProducing`, a pausable source pauses and resumes on demand. Doing both by
        /// hand can lose the wake-up (demand may arrive before the pause took effect): feed a
        /// ``DemandGate`` instead (`sink.onDemand { gate.add($0) }`, `gate.spend()` before each yield),
        /// which calls pause/resume itself and cannot miss it. `URLSessionTask.suspend()` is not
        /// a pause on Linux (swift-corelibs-foundation restarts a running download from byte
        /// 0); see the Streams article for which sources pause correctly where.
        public func onDemand(_ handler: @escaping @Sendable (Int) -> Void) {
            token.storage.onDemand(handler)
        }

        /// Keeps `object` alive until this stream's teardown has run, then releases it: the
        /// delegate a legacy manager holds `weak`ly, when it is a class of your own (a
        /// ``DelegateProxy`` made from this sink is kept without asking). Call it in the builder;
        /// once the stream has ended nothing is kept.
        ///
        /// <!-- snippet: body — in a method of a `@MainActor` view model with a legacy `manager` and a plain-class `LocationForwarder` -->
        /// ```swift
        /// let locations = CallbackStream<Location, any Error> { sink in
        ///     let forwarder = LocationForwarder(sink)
        ///     sink.keepUntilTeardown(forwarder)     // the manager holds its delegate weak
        ///     manager.delegate = forwarder
        ///     manager.start()
        ///     return Cancellation { manager.stop(); manager.delegate = nil }
        /// }
        /// ```
        public func keepUntilTeardown(_ object: AnyObject) {
            token.storage.keepUntilTeardown(object)
        }

        /// ``yield(_:)`` for a source that must send only what ``onDemand(_:)`` reported (a Combine
        /// publisher): also says whether the element was within that demand, decided under the
        /// same lock as the yield, from the one count the stream keeps (the demand it reported
        /// and no yield has used yet), and whether any demand handler was registered yet. An
        /// element beyond it is still enqueued (nothing is lost). After the stream ended the
        /// element is discarded without a misuse report: the adapter decides what a late
        /// element means for its source.
        @inlinable
        package func yieldWithinDemand(_ element: sending Element) -> DemandedYield {
            let (action, verdict) = token.storage.decideYieldWithinDemand(element)
            switch action {
            case .answer:
                return verdict
            case .terminated(let element, _):
                token.storage.undelivered?(element, .terminated)
                return .terminated
            case .resumeConsumer, .dropped:
                _ = token.storage.act(action, fileID: #fileID, line: #line)
                return verdict
            }
        }

        /// Reports a misuse by the source behind this sink (a publisher that sent more than was
        /// requested, …) at the stream's call site, through the diagnostics handler that was
        /// current where the stream was made: for adapters built on `CallbackStream` in the
        /// package's other modules, which then need not keep a call site of their own.
        package func report(_ kind: BridgeDiagnostic.Kind, _ message: String, bridge: AnyObject?) {
            token.storage.site.report(kind, message, bridge: bridge)
        }
    }
}

/// What ``CallbackStream/Sink/yieldWithinDemand(_:)`` did with an element (not generic, so a
/// caller's per-element path needs no metadata for it).
@usableFromInline
package enum DemandedYield {
    /// Enqueued, delivered or dropped by the policy, within the demand reported.
    case accepted
    /// Enqueued (or delivered) although the demand reported was used up.
    case beyondDemand
    /// Enqueued (or delivered) before any demand handler was registered: the source sent
    /// before it could have been asked for anything.
    case beforeDemand
    /// The stream is over; the element was discarded.
    case terminated
}
