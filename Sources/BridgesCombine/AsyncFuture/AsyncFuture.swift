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
/// <!-- snippet: body — in a method of a `@MainActor` view model with `api` -->
/// ```swift
/// let user = Future<UserProfile, any Error> { promise in
///     Task {
///         do { promise(.success(try await api.loadUser())) } catch { promise(.failure(error)) }
///     }
/// }
/// ```
/// After:
/// <!-- snippet: body — in a method of a `@MainActor` view model with `api` -->
/// ```swift
/// let user = AsyncFuture { try await api.loadUser() }
/// ```
///
/// Unlike Combine's `Future`, which runs its closure at once and shares the result, an
/// `AsyncFuture` is *cold and per-subscriber*, like `Deferred { Future { … } }`: each
/// subscription runs `operation` in its own task, started once the subscriber requests demand,
/// and `cancel()` cancels that task. The subscriber receives the value and `.finished`, or
/// `.failure`, from that task. Wrap it in `.share()` if one run should serve many subscribers.
///
/// The subscriber is called in the isolation the `AsyncFuture` was created in, as
/// ``AsyncSequencePublisher`` does: a `sink` written in a `@MainActor` view model (which Swift 6
/// checks at run time) runs on the main actor. `operation` itself is `@Sendable` and runs off
/// the caller's actor unless it is isolated.
public struct AsyncFuture<Output: Sendable, Failure: Error>: Publisher, Sendable {
    private let publisher: AsyncSequencePublisher<OperationSequence<Output, Failure>, Failure>

    /// A publisher that runs `operation` for each subscriber and sends its result.
    ///
    /// - Parameters:
    ///   - isolation: Where subscribers are called; leave the default (the caller's).
    ///   - fileID: Call site reported with any misuse; leave the default.
    ///   - line: Call site reported with any misuse; leave the default.
    ///   - operation: The work, run once per subscriber in a task of its own.
    public init(
        isolation: isolated (any Actor)? = #isolation, fileID: String = #fileID, line: UInt = #line,
        _ operation: @escaping @Sendable () async throws(Failure) -> Output
    ) {
        self.init(operation: operation, isolation: isolation, fileID: fileID, line: line)
    }

    private init(
        operation: @escaping @Sendable () async throws(Failure) -> Output, isolation: (any Actor)?, fileID: String,
        line: UInt
    ) {
        publisher = AsyncSequencePublisher(
            OperationSequence(operation: operation),
            failure: { error in error as! Failure },  // `next()` only rethrows `operation`'s typed error
            endsAfterOneElement: true,
            isolation: isolation,
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
    public init(
        isolation: isolated (any Actor)? = #isolation, fileID: String = #fileID, line: UInt = #line,
        _ operation: @escaping @Sendable () async -> Output
    ) {
        self.init(
            operation: { () async throws(Never) -> Output in await operation() }, isolation: isolation, fileID: fileID,
            line: line
        )
    }
}

/// A sequence of exactly one element: the result of `operation`, computed on the first `next()`.
///
/// The operation is stored as a closure returning a `Result`, not as `() async throws(Failure)`:
/// a stored typed-throws function type needs the Swift 6 runtime ("runtime support for typed
/// throws function types is only available in macOS 15.0"), and the package runs back to
/// macOS 10.15 / iOS 13.
struct OperationSequence<Element, Failure: Error>: AsyncSequence, Sendable {
    let operation: @Sendable () async -> Result<Element, Failure>

    init(operation: @escaping @Sendable () async throws(Failure) -> Element) {
        self.operation = { () async -> Result<Element, Failure> in
            do throws(Failure) {
                return .success(try await operation())
            } catch {
                return .failure(error)
            }
        }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        var operation: (@Sendable () async -> Result<Element, Failure>)?

        mutating func next() async throws -> Element? {
            guard let operation else { return nil }
            self.operation = nil
            return try await operation().get()
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(operation: operation) }
}

#endif
