import Bridges

/// One element on its way through a ``ProcessingChannel``: the element and its sender's
/// completion (the `done` of the single-shot bridge `send` awaits in).
///
/// Identity matters: a cancelled send withdraws *its* envelope from the queue.
final class ProcessingEnvelope<Element: Sendable>: Sendable {
    let element: Element
    /// Resumes the sender: `true` once a consumer processed the element, `false` if it was
    /// refused (the channel had finished). Called once (by whoever holds the envelope last).
    let done: @Sendable (Bool) -> Void

    init(_ element: Element, done: @escaping @Sendable (Bool) -> Void) {
        self.element = element
        self.done = done
    }
}

/// Which consumer gets which envelope: the only state a ``ProcessingChannel`` keeps beside the
/// engine. A pure value behind the channel's lock; each event returns what to do after the lock
/// is released.
///
/// Each consumer is one iteration of a `.rendezvous` ``CallbackStream``: its demand (1, when its
/// loop asks for an element and nothing is buffered) makes it idle here (in `idleConsumers`); sending to it is
/// `sink.yield`, ending it is `sink.finish()`. Suspending and resuming consumers, their
/// cancellation, the teardown and the end of each loop are the engine's.
///
/// Invariant: `idleConsumers` and `pending` are never both non-empty (an envelope meets the first
/// idle consumer, a consumer the oldest pending envelope).
struct ProcessingChannelState<Element: Sendable> {
    typealias Envelope = ProcessingEnvelope<Element>
    typealias Sink = CallbackStream<Envelope, Never>.Sink

    /// What to do outside the lock.
    enum Action {
        case none
        /// Hand `envelope` to this consumer.
        case handOver(Envelope, to: Sink)
        /// The channel finished: end these consumers' loops.
        case finish([Sink])
        /// The channel had finished: the send is refused.
        case refuse(Envelope)
    }

    private var nextConsumerID: UInt64 = 0
    private var isFinished = false
    /// Sent, not handed to a consumer yet, oldest first.
    private var pending: [Envelope] = []
    /// Consumers asking in `next()` for an element, oldest first.
    private var idleConsumers: [(id: UInt64, sink: Sink)] = []

    mutating func makeConsumerID() -> UInt64 {
        nextConsumerID += 1
        return nextConsumerID
    }

    mutating func send(_ envelope: Envelope) -> Action {
        if isFinished { return .refuse(envelope) }
        return offer(envelope, atFront: false)
    }

    /// An envelope handed to a consumer that ended before taking it comes back, first in line
    /// (it was sent before anything still pending). Accepted after `finish()` too: it was sent before.
    mutating func requeue(_ envelope: Envelope) -> Action {
        offer(envelope, atFront: true)
    }

    private mutating func offer(_ envelope: Envelope, atFront: Bool) -> Action {
        if !idleConsumers.isEmpty {
            return .handOver(envelope, to: idleConsumers.removeFirst().sink)
        }
        if atFront { pending.insert(envelope, at: 0) } else { pending.append(envelope) }
        return .none
    }

    /// The consumer `id` asks for an element (its stream's demand).
    mutating func consumerWaits(id: UInt64, sink: Sink) -> Action {
        if !pending.isEmpty { return .handOver(pending.removeFirst(), to: sink) }
        if isFinished { return .finish([sink]) }
        idleConsumers.append((id, sink))
        return .none
    }

    /// The consumer's stream ended (its teardown): it waits no more.
    mutating func consumerEnded(id: UInt64) {
        idleConsumers.removeAll { $0.id == id }
    }

    /// The sender gave up (cancelled): its element leaves the queue if no consumer has it yet.
    mutating func withdraw(_ envelope: Envelope) {
        pending.removeAll { $0 === envelope }
    }

    /// No more sends; idle consumers end now (nothing is pending while any waits), the others
    /// once they have taken what is pending.
    mutating func finish() -> Action {
        isFinished = true
        defer { idleConsumers = [] }
        return idleConsumers.isEmpty ? .none : .finish(idleConsumers.map(\.sink))
    }
}
