import Bridges

/// An `AsyncSequence` whose `send` returns only once the consumer has processed the element:
/// when the consumer asks for the next one, or its loop ends.
///
/// So a presenter test can send an input and assert on the result right away, without sleeps
/// or yields:
///
/// <!-- snippet: test — with a `Presenter` and a `view` that records its updates -->
/// ```swift
/// let items = ProcessingChannel<[Item]>()
/// let presenter = Presenter(items: items, view: view)   // runs `for await items in items { view.update(items) }`
/// try await items.send(input)
/// #expect(view.updatedItems == input)
/// ```
///
/// - Each element goes to one consumer (several iterators share the elements, in order).
/// - `send` suspends until a consumer takes the element and then asks for the next one (or its
///   iterator is released). It throws `CancellationError` if the sending task is cancelled
///   first; an element no consumer had taken then leaves the queue and is never delivered.
/// - ``finish()`` ends the sequence: consumers take the elements already sent, then get `nil`.
///   Sending after `finish()` returns at once, drops the element and reports
///   `BridgeDiagnostic.Kind.yieldAfterFinish` through `Diagnostics`.
/// - A consumer whose task is cancelled while waiting gets `nil`; an element handed to it in
///   that instant goes to the next consumer instead (nothing sent is lost).
/// - A `@MainActor` (or any actor's) loop takes elements without leaving its actor (where
///   `for await` calls `next(isolation:)`: Linux, macOS 15 / iOS 18 and later).
///
/// Built on the package's engines: each iterator is one iteration of a `.rendezvous`
/// `CallbackStream` (suspension, cancellation, the end of the loop), each `send` one
/// single-shot bridge (`withCallback`: exactly once, cancellation); the channel itself only
/// decides which consumer takes which element (`ProcessingChannelState`).
public final class ProcessingChannel<Element: Sendable>: AsyncSequence, Sendable {
    typealias Envelope = ProcessingEnvelope<Element>
    typealias State = ProcessingChannelState<Element>

    private let state = LockedState(State())

    public init() {}

    /// Sends `element` and returns once a consumer has processed it.
    ///
    /// - Throws: `CancellationError` if the sending task is cancelled before then.
    public func send(_ element: Element, fileID: String = #fileID, line: UInt = #line) async throws {
        let processed = try await withCallback(fileID: fileID, line: line) {
            (done: @escaping @Sendable (Bool) -> Void) in
            let envelope = Envelope(element, done: done)
            act(state.withLock { $0.send(envelope) })
            // Weak: the bridge keeps its token after completion, and the envelope holds `done`,
            // which holds the bridge; a strong capture would be a cycle keeping the channel alive.
            return Cancellation { [self, weak envelope] in
                if let envelope { state.withLock { $0.withdraw(envelope) } }
            }
        }
        if processed { return }
        Diagnostics.current(
            BridgeDiagnostic(
                kind: .yieldAfterFinish,
                message: "ProcessingChannel.send after finish(): the element was dropped",
                fileID: fileID, line: line
            ))
    }

    /// Ends the channel: consumers take what was already sent, then their loops end.
    public func finish() {
        act(state.withLock { $0.finish() })
    }

    public func makeAsyncIterator() -> Iterator {
        let id = state.withLock { $0.makeConsumerID() }
        // An envelope handed to this consumer and never taken (it was cancelled in between)
        // goes back to the channel, first in line.
        let stream = CallbackStream<Envelope, Never>.synchronous(
            buffering: .rendezvous,
            onUndelivered: { [self] envelope, _ in act(state.withLock { $0.requeue(envelope) }) }
        ) { [self] sink in
            // Rendezvous demand: 1 each time the loop asks and nothing is buffered.
            sink.onDemand { [self] _ in act(state.withLock { $0.consumerWaits(id: id, sink: sink) }) }
            return Cancellation { [self] in state.withLock { $0.consumerEnded(id: id) } }
        }
        return Iterator(stream.makeAsyncIterator())
    }

    private func act(_ action: State.Action) {
        switch action {
        case .none:
            break
        case .handOver(let envelope, let sink):
            // If that consumer has just ended, the engine hands the envelope to `onUndelivered`.
            sink.yield(envelope)
        case .finish(let sinks):
            for sink in sinks { sink.finish() }
        case .refuse(let envelope):
            envelope.done(false)
        }
    }

    public struct Iterator: AsyncIteratorProtocol {
        private var engine: CallbackStream<Envelope, Never>.AsyncIterator
        private let taken = TakenEnvelope()

        init(_ engine: CallbackStream<Envelope, Never>.AsyncIterator) { self.engine = engine }

        /// The next element, or `nil` once the channel finished (or the task was cancelled).
        /// Asking for it marks the previous one processed: its `send` returns.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            taken.processed()
            guard let envelope = await engine.next(isolation: actor) else { return nil }
            taken.envelope = envelope
            return envelope.element
        }

        public mutating func next() async -> Element? {
            await next(isolation: nil)
        }
    }

    /// The element the iterator took last; processed when the iterator asks for the next one
    /// or is released (its loop ended).
    final class TakenEnvelope {
        var envelope: Envelope?

        func processed() {
            guard let envelope else { return }
            self.envelope = nil
            envelope.done(true)
        }

        deinit { envelope?.done(true) }
    }
}

@available(*, unavailable)
extension ProcessingChannel.Iterator: Sendable {}
