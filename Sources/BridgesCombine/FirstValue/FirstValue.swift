#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine
import Bridges

extension Publisher where Output: Sendable {
    /// The first value the publisher sends, awaited; `nil` if it finishes without one.
    ///
    /// Requests exactly one element (`request(.max(1))`), and cancels the subscription once the
    /// value has arrived, before this returns (so a long-lived publisher is not kept
    /// subscribed); a publisher that completes is not cancelled. If the awaiting task is
    /// cancelled first, the subscription is cancelled at once and this throws
    /// `CancellationError` (Combine's `Future.value` has no cancellation at all; `nil` means
    /// only "finished without a value"). A publisher that sends more than the one element
    /// requested is misbehaving: the extra elements are discarded and reported as
    /// `BridgeDiagnostic.Kind.excessEmission`. `Output` must be `Sendable`: the value crosses
    /// from the publisher's thread to the awaiting task.
    ///
    /// It is `stream(buffering: .rendezvous)` taken for one element: the same subscriber, the
    /// same engine, the same guarantees (the subscription is released when this returns).
    ///
    /// Before: `let user = try await withCheckedThrowingContinuation { c in cancellable = api.user.sink(…) }`
    /// After:  `let user = try await api.user.firstValue`
    ///
    /// - Throws: the publisher's `Failure`, or `CancellationError` if the awaiting task is cancelled.
    @inlinable
    public var firstValue: Output? {
        get async throws {
            if let value = try await firstElement() { return value }
            if Task.isCancelled { throw CancellationError() }
            return nil
        }
    }

    /// The first value the publisher sends, awaited, like `firstValue` but throwing instead of
    /// returning nil.
    ///
    /// - Throws: the publisher's failure; ``CombineBridgeError/finishedWithoutValue`` if it
    ///   finishes without a value; `CancellationError` if the awaiting task is cancelled (the
    ///   subscription is cancelled first).
    /// - Note: Combine's `Future` and `CurrentValueSubject` have a `value` of their own, which wins
    ///   on those types in every context (a member of the type outranks a protocol extension's):
    ///   `future.value` is Combine's, without cancellation, and `subject.value` is the subject's
    ///   current value, read synchronously. Use `firstValue` there to await this one's behaviour.
    @inlinable
    public var value: Output {
        get async throws {
            if let value = try await firstElement() { return value }
            if Task.isCancelled { throw CancellationError() }
            throw CombineBridgeError.finishedWithoutValue
        }
    }

    /// One element of `stream(buffering: .rendezvous)`: subscribes, requests one, and ends the
    /// iteration (the teardown cancels the subscription unless it completed) before returning.
    /// `nil` when the publisher finished without a value *or* the task was cancelled (the
    /// engine's `next()` ends a cancelled task's iteration with `nil`): callers tell the two
    /// apart with `Task.isCancelled`, which stays true once set.
    ///
    /// Inlinable, like `stream(buffering:)`: specialised in the caller, the engine runs without
    /// generic metadata look-ups (unspecialised, they made a call ~9x slower than before).
    @inlinable
    func firstElement() async throws(Failure) -> Output? {
        var iterator = stream(buffering: .rendezvous).makeAsyncIterator()
        return try await iterator.next(isolation: nil)
    }
}

extension Publisher where Output: Sendable, Failure == Never {
    /// The first value the publisher sends, awaited; `nil` if it finishes without one. The only
    /// error is `CancellationError`, when the awaiting task is cancelled (the subscription is
    /// cancelled then).
    ///
    /// The same as the general `firstValue`, spelled for `Failure == Never` with a typed
    /// `throws(CancellationError)`.
    @inlinable
    public var firstValue: Output? {
        get async throws(CancellationError) {
            if let value = await firstElement() { return value }
            if Task.isCancelled { throw CancellationError() }
            return nil
        }
    }
}

#endif
