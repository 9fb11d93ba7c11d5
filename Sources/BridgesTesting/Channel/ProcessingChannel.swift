/// An `AsyncSequence` whose `send` returns only once the consumer has processed the element:
/// when the consumer asks for the next one, or its loop ends.
///
/// So a presenter test can send an input and assert on the result right away, without sleeps
/// or yields:
///
/// ```swift
/// let items = ProcessingChannel<[Item]>()
/// let presenter = Presenter(items: items, view: view)   // runs `for await items in items { view.update(items) }`
/// try await items.send(input)
/// #expect(view.updatedItems == input)
/// ```
///
/// - Each element goes to one consumer (several iterators share the elements, in order).
/// - `send` suspends until a consumer takes the element and then asks for the next one (or its
///   iterator is released). It throws `CancellationError` if the sending task is cancelled first.
/// - ``finish()`` ends the sequence: consumers take the elements already sent, then get `nil`.
///   Sending after `finish()` returns at once, drops the element and reports
///   `BridgeDiagnostic.Kind.yieldAfterFinish` through `Diagnostics`.
/// - A consumer whose task is cancelled while waiting gets `nil`.
public final class ProcessingChannel<Element: Sendable>: AsyncSequence, Sendable {
    private let state = LockedState(ProcessingChannelState<Element>())

    public init() {}

    /// Sends `element` and returns once a consumer has processed it.
    public func send(_ element: Element, fileID: String = #fileID, line: UInt = #line) async throws {
        let id = state.withLock { $0.makeID() }
        defer { state.withLock { $0.sendEnded(id: id) } }
        let processed = await withTaskCancellationHandler {
            await withUnsafeContinuation { (sender: UnsafeContinuation<Bool, Never>) in
                resume(state.withLock { $0.send(id: id, element, sender) })
            }
        } onCancel: {
            resume(state.withLock { $0.cancelSend(id: id) })
        }
        if processed { return }
        try Task.checkCancellation()
        Diagnostics.current(BridgeDiagnostic(
            kind: .yieldAfterFinish,
            message: "ProcessingChannel.send after finish(): the element was dropped",
            fileID: fileID, line: line
        ))
    }

    /// Ends the channel: consumers take what was already sent, then their loops end.
    public func finish() {
        resume(state.withLock { $0.finish() })
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(channel: self, token: IteratorToken(channel: self, id: state.withLock { $0.makeID() }))
    }

    public struct Iterator: AsyncIteratorProtocol {
        let channel: ProcessingChannel
        let token: IteratorToken
        private var isDone = false

        init(channel: ProcessingChannel, token: IteratorToken) {
            self.channel = channel
            self.token = token
        }

        public mutating func next() async -> Element? {
            if isDone { return nil }
            let element = await channel.next(iterator: token.id)
            if element == nil { isDone = true }
            return element
        }
    }

    /// Tells the channel when an iterator is released: the element it took counts as processed.
    final class IteratorToken: Sendable {
        let channel: ProcessingChannel
        let id: UInt64

        init(channel: ProcessingChannel, id: UInt64) {
            self.channel = channel
            self.id = id
        }

        deinit { channel.resume(channel.state.withLock { $0.iteratorEnded(id) }) }
    }

    private func next(iterator: UInt64) async -> Element? {
        defer { state.withLock { $0.nextEnded(iterator: iterator) } }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (consumer: UnsafeContinuation<Element?, Never>) in
                resume(state.withLock { $0.next(iterator: iterator, consumer) })
            }
        } onCancel: {
            resume(state.withLock { $0.cancelNext(iterator: iterator) })
        }
    }

    private func resume(_ resumptions: ProcessingChannelState<Element>.Resumptions) {
        for (sender, processed) in resumptions.senders { sender.resume(returning: processed) }
        for (consumer, element) in resumptions.consumers { consumer.resume(returning: element) }
    }
}

@available(*, unavailable)
extension ProcessingChannel.Iterator: Sendable {}
