#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine
import Bridges

/// A publisher of the one result of an `async` operation, whose task is cancelled when the
/// subscription is.
///
/// Before (the task outlives the subscriber; `cancel()` cannot reach it):
/// ```swift
/// Future { promise in
///     Task { promise(Result { try await api.load() }) }
/// }
/// ```
/// After:
/// ```swift
/// AsyncFuture { try await api.load() }
/// ```
///
/// Unlike Combine's `Future`, which runs its closure at once and shares the result, an
/// `AsyncFuture` is *cold and per-subscriber*, like `Deferred { Future { … } }`: each
/// subscription runs `operation` in its own task, started once the subscriber requests demand,
/// and `cancel()` cancels that task. The subscriber receives the value and `.finished`, or
/// `.failure`, from that task. Wrap it in `.share()` if one run should serve many subscribers.
public struct AsyncFuture<Output, Failure: Error>: Publisher, Sendable {
    private let publisher: AsyncSequencePublisher<OperationSequence<Output, Failure>, Failure>

    /// A publisher that runs `operation` for each subscriber and sends its result.
    public init(fileID: String = #fileID, line: UInt = #line, _ operation: @escaping @Sendable () async throws(Failure) -> Output) {
        self.init(operation: operation, fileID: fileID, line: line)
    }

    private init(operation: @escaping @Sendable () async throws(Failure) -> Output, fileID: String, line: UInt) {
        publisher = AsyncSequencePublisher(
            OperationSequence(operation: operation),
            failure: { error in error as! Failure },  // `next()` only rethrows `operation`'s typed error
            endsAfterOneElement: true,
            fileID: fileID,
            line: line
        )
    }

    public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        publisher.receive(subscriber: subscriber)
    }
}

extension AsyncFuture where Failure == Never {
    /// A publisher that runs a non-throwing `operation` for each subscriber and sends its result.
    public init(fileID: String = #fileID, line: UInt = #line, _ operation: @escaping @Sendable () async -> Output) {
        self.init(operation: { () async throws(Never) -> Output in await operation() }, fileID: fileID, line: line)
    }
}

/// A sequence of exactly one element: the result of `operation`, computed on the first `next()`.
struct OperationSequence<Element, Failure: Error>: AsyncSequence, Sendable {
    let operation: @Sendable () async throws(Failure) -> Element

    struct AsyncIterator: AsyncIteratorProtocol {
        var operation: (@Sendable () async throws(Failure) -> Element)?

        mutating func next() async throws -> Element? {
            guard let operation else { return nil }
            self.operation = nil
            return try await operation()
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(operation: operation) }
}

#endif
