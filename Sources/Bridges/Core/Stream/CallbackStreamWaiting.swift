/// What only the waiting policies (`.suspending(n)`, `.watermark`, `.rendezvous`) add to
/// ``CallbackStreamStateMachine``: `await send`s that wait for room, and the demand reported to a
/// pull source, derived from the buffer's depth. Part of the machine's state, decided under the
/// stream's lock like the rest.
extension CallbackStreamStateMachine {
    /// Demand to report to the producer: call `handler` with `count`, outside the lock.
    @usableFromInline
    struct Demand {
        @usableFromInline let handler: DemandHandler
        @usableFromInline let count: Int

        @inlinable
        init(_ handler: @escaping DemandHandler, _ count: Int) {
            self.handler = handler
            self.count = count
        }

        @inlinable func report() { handler(count) }
    }

    /// An `await send` suspended because a waiting policy had no room for its element. A
    /// cancelled sender keeps its place (its element is still delivered in the order it was
    /// sent); only its continuation is taken.
    @usableFromInline
    struct Sender {
        @usableFromInline let id: UInt64
        @usableFromInline let element: Element
        @usableFromInline var continuation: SenderContinuation?

        @inlinable
        init(id: UInt64, element: Element, continuation: SenderContinuation?) {
            self.id = id
            self.element = element
            self.continuation = continuation
        }
    }

    /// What only the waiting policies (`.suspending(n)`, `.watermark`, `.rendezvous`) use:
    /// suspended senders and the demand reported to a pull source. An object of its own, made
    /// with the machine for those policies only, so the others (most streams: `.unbounded`, the
    /// lossy ones) do not carry 48 bytes they never touch. Read and written only under the
    /// stream's lock, like the rest of the machine (hence no exclusivity checks: a dynamic one
    /// per access would cost more than the field).
    @usableFromInline
    final class Waiting {
        /// Demand is reported only once the depth is at most this (`.suspending(n)`: n − 1, as
        /// soon as there is room; `.watermark(low:high:)`: low).
        @usableFromInline let lowWatermark: Int
        /// `await send`s waiting for room, oldest first.
        @usableFromInline @exclusivity(unchecked) var senders: [Sender] = []
        @usableFromInline @exclusivity(unchecked) var nextSenderID: UInt64 = 0
        @usableFromInline @exclusivity(unchecked) var demandHandler: DemandHandler?
        /// Demand reported to `demandHandler` and not yet used by a yield. Demand is reported
        /// from depth: only when the room in the buffer exceeds this, and only the difference,
        /// so the producer is never told it may send more than fits.
        @usableFromInline @exclusivity(unchecked) var granted = 0

        @inlinable init(lowWatermark: Int) { self.lowWatermark = lowWatermark }
    }

    // The waiting policies' fields, through `waiting`. Read only where the mode is `.waiting`
    // (or, for `senders`, `hasSenders` and `demandHandler`, anywhere: no waiting state means no
    // senders and no handler), and written only there: touching the others under another policy
    // traps (a force unwrap: one predictable branch, never undefined behaviour).

    @inlinable var lowWatermark: Int { waiting!.lowWatermark }
    @inlinable var senders: [Sender] {
        get { waiting?.senders ?? [] }
        nonmutating _modify { yield &waiting!.senders }
    }
    @inlinable var hasSenders: Bool {
        guard let waiting else { return false }
        return !waiting.senders.isEmpty
    }
    @inlinable var nextSenderID: UInt64 {
        get { waiting!.nextSenderID }
        nonmutating set { waiting!.nextSenderID = newValue }
    }
    @inlinable var demandHandler: DemandHandler? {
        get { waiting?.demandHandler }
        nonmutating set { waiting!.demandHandler = newValue }
    }
    @inlinable var granted: Int {
        get { waiting!.granted }
        nonmutating set { waiting!.granted = newValue }
    }

    /// Whether taking an element may give the producer more demand (`.suspending(n)`, n > 0).
    @inlinable var signalsDemandOnTake: Bool { mode == .waiting && capacity > 0 }

    /// Room left in the buffer (negative when a synchronous yield overfilled it).
    @inlinable var room: Int { capacity - buffer.count - senders.count }

    /// After a take under `.suspending(n)`: the demand the producer has not been told of yet.
    @inlinable
    mutating func demandAfterTake() -> Demand? {
        guard signalsDemandOnTake, let handler = demandHandler else { return nil }
        let room = self.room
        guard room > granted, capacity - room <= lowWatermark else { return nil }
        defer { granted = room }
        return Demand(handler, room - granted)
    }

    /// Whether a yield now stays within the demand reported to the producer: always, except
    /// under a waiting policy whose reported demand is used up (a source that must send only
    /// what was asked, such as a Combine publisher, is then misbehaving).
    @inlinable var yieldIsDemanded: Bool {
        guard let waiting else { return true }
        return waiting.granted > 0
    }

    /// A yield under a waiting policy uses one unit of the demand reported (if any was left).
    @inlinable
    mutating func useDemand() {
        if granted > 0 { granted -= 1 }
    }

    /// Rendezvous (`.suspending(0)`) with a demand handler: before the consumer suspends, ask
    /// the producer for one element (once per wait), so that a source that answers
    /// synchronously (a Combine publisher's `request(.max(1))`, a pull source) hands its element
    /// over without the consumer suspending at all; `suspend` then asks nothing more. Returns
    /// nil when there is nothing to ask.
    @inlinable
    mutating func demandBeforeSuspending() -> Demand? {
        guard mode == .waiting, capacity == 0, case .streaming = phase, consumer == nil, granted == 0,
            buffer.isEmpty, senders.isEmpty, let handler = demandHandler
        else { return nil }
        granted = 1
        return Demand(handler, 1)
    }

    // MARK: - Send

    @usableFromInline
    enum SendAttempt {
        /// Done without waiting: act on this yield action.
        case done(YieldAction)
        /// No room: suspend with this id and call `enqueueSender`.
        case mustWait(Element, id: UInt64)
    }

    @inlinable
    mutating func trySend(_ element: Element) -> SendAttempt {
        guard mode == .waiting, case .streaming = phase, consumer == nil,
            buffer.count + senders.count >= capacity
        else { return .done(sendWithoutWaiting(element)) }
        nextSenderID &+= 1
        return .mustWait(element, id: nextSenderID)
    }

    /// Like `yield`, except that a waiting policy that has room answers `.enqueued`.
    @inlinable
    mutating func sendWithoutWaiting(_ element: Element) -> YieldAction {
        switch yield(element) {
        case .resumeConsumer(let consumer, let element, let demand, _):
            return .resumeConsumer(consumer, element, demand: demand, result: .enqueued)
        case .answer:
            return .answer(.enqueued)
        case let other:
            return other
        }
    }

    @usableFromInline
    enum EnqueueSenderAction {
        /// Suspended until the consumer makes room.
        case suspended
        /// Room appeared (or the stream ended) meanwhile: act on this yield action and resume the
        /// sender with its result.
        case resumeNow(SenderContinuation, YieldAction)
    }

    @inlinable
    mutating func enqueueSender(
        _ element: Element, id: UInt64, _ continuation: SenderContinuation
    ) -> EnqueueSenderAction {
        guard case .streaming = phase, consumer == nil, buffer.count + senders.count >= capacity else {
            return .resumeNow(continuation, sendWithoutWaiting(element))
        }
        useDemand()
        senders.append(Sender(id: id, element: element, continuation: continuation))
        return .suspended
    }

    /// The sending task was cancelled: its element keeps its place in line (a waiting policy
    /// never loses data, and elements are delivered in the order they were sent, whatever the
    /// order of cancellation) and the sender is told `.stopProducing` now. Returns nil if it
    /// was already resumed.
    @inlinable
    mutating func cancelSender(id: UInt64) -> SenderContinuation? {
        guard let index = senders.firstIndex(where: { $0.id == id }) else { return nil }
        defer { senders[index].continuation = nil }
        return senders[index].continuation
    }

    // MARK: - Demand

    /// Installs the demand handler; returns the demand to report at once, if any.
    @inlinable
    mutating func registerDemand(_ handler: @escaping DemandHandler) -> (initial: Int?, replaced: DemandHandler?) {
        switch phase {
        case .finished, .terminated:
            return (nil, nil)
        case .idle, .streaming:
            demandRegistered = true
            // The other policies never report more demand than this first, unlimited one, so
            // their handler is not kept (the caller still holds it to report `Int.max`).
            guard mode == .waiting else { return (Int.max, nil) }
            let replaced = demandHandler
            demandHandler = handler
            if capacity == 0 {
                granted = consumer != nil ? 1 : 0
                return (consumer != nil ? 1 : nil, replaced)
            }
            let room = self.room
            granted = Swift.max(room, 0)
            return (room > 0 ? room : nil, replaced)
        }
    }
}
