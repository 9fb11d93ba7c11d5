/// The pure state of a ``ProcessingChannel``. Each event returns what the caller must resume
/// after releasing the lock.
struct ProcessingChannelState<Element> {
    typealias Sender = UnsafeContinuation<Bool, Never>
    typealias Consumer = UnsafeContinuation<Element?, Never>

    struct PendingSend {
        let id: UInt64
        let element: Element
        let sender: Sender
    }

    private var nextID: UInt64 = 0
    private(set) var isFinished = false
    /// Sends no consumer has taken yet, oldest first.
    private var pending: [PendingSend] = []
    /// Consumers suspended in `next()`, oldest first.
    private var waiting: [(iterator: UInt64, consumer: Consumer)] = []
    /// Per iterator: the send whose element it took and has not yet finished processing.
    private var processing: [UInt64: (send: UInt64, sender: Sender)] = [:]
    private var cancelledSends: Set<UInt64> = []
    private var cancelledNexts: Set<UInt64> = []

    mutating func makeID() -> UInt64 {
        nextID += 1
        return nextID
    }

    /// What to resume after an event: consumers with an element (or nil), senders with
    /// `true` (processed) or `false` (cancelled or the channel finished).
    struct Resumptions {
        var consumers: [(Consumer, Element?)] = []
        var senders: [(Sender, Bool)] = []
    }

    mutating func send(id: UInt64, _ element: Element, _ sender: Sender) -> Resumptions {
        var result = Resumptions()
        if isFinished || cancelledSends.remove(id) != nil {
            result.senders.append((sender, false))
        } else if !waiting.isEmpty {
            let (iterator, consumer) = waiting.removeFirst()
            processing[iterator] = (id, sender)
            result.consumers.append((consumer, element))
        } else {
            pending.append(PendingSend(id: id, element: element, sender: sender))
        }
        return result
    }

    /// A consumer asks for the next element: the element it took before is processed.
    mutating func next(iterator: UInt64, _ consumer: Consumer) -> Resumptions {
        var result = Resumptions()
        result.senders += processed(iterator: iterator)
        if cancelledNexts.remove(iterator) != nil {
            result.consumers.append((consumer, nil))
        } else if !pending.isEmpty {
            let send = pending.removeFirst()
            processing[iterator] = (send.id, send.sender)
            result.consumers.append((consumer, send.element))
        } else if isFinished {
            result.consumers.append((consumer, nil))
        } else {
            waiting.append((iterator, consumer))
        }
        return result
    }

    /// The iterator was released (the loop ended): the element it took is processed.
    mutating func iteratorEnded(_ iterator: UInt64) -> Resumptions {
        cancelledNexts.remove(iterator)
        return Resumptions(senders: processed(iterator: iterator))
    }

    mutating func cancelSend(id: UInt64) -> Resumptions {
        if let index = pending.firstIndex(where: { $0.id == id }) {
            return Resumptions(senders: [(pending.remove(at: index).sender, false)])
        }
        if let (iterator, entry) = processing.first(where: { $0.value.send == id }) {
            processing[iterator] = nil
            return Resumptions(senders: [(entry.sender, false)])
        }
        cancelledSends.insert(id)
        return Resumptions()
    }

    /// Forgets a send that completed, so a late cancellation does not linger.
    mutating func sendEnded(id: UInt64) { cancelledSends.remove(id) }

    mutating func cancelNext(iterator: UInt64) -> Resumptions {
        if let index = waiting.firstIndex(where: { $0.iterator == iterator }) {
            return Resumptions(consumers: [(waiting.remove(at: index).consumer, nil)])
        }
        cancelledNexts.insert(iterator)
        return Resumptions()
    }

    mutating func nextEnded(iterator: UInt64) { cancelledNexts.remove(iterator) }

    /// No more sends are accepted; consumers take what is pending, then get nil.
    mutating func finish() -> Resumptions {
        isFinished = true
        defer { waiting = [] }
        return Resumptions(consumers: waiting.map { ($0.consumer, nil) })
    }

    private mutating func processed(iterator: UInt64) -> [(Sender, Bool)] {
        guard let entry = processing.removeValue(forKey: iterator) else { return [] }
        return [(entry.sender, true)]
    }
}
