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
    /// Requests exactly one element, then cancels the subscription as soon as it arrives (so a
    /// long-lived publisher is not kept subscribed). If the awaiting task is cancelled first, the
    /// subscription is cancelled at once and this throws `CancellationError` (Combine's
    /// `Future.value` has no cancellation at all; `nil` means only "finished without a value").
    /// Elements a misbehaving publisher sends after the first are ignored. `Output` must be
    /// `Sendable`: the value crosses from the publisher's thread to the awaiting task.
    ///
    /// Before: `let user = try await withCheckedThrowingContinuation { c in cancellable = api.user.sink(…) }`
    /// After:  `let user = try await api.user.firstValue`
    ///
    /// - Throws: the publisher's `Failure`, or `CancellationError` if the awaiting task is cancelled.
    public var firstValue: Output? {
        get async throws {
            switch await firstOutcome() {
            case .value(let value): return value
            case .finished: return nil
            case .cancelled: throw CancellationError()
            case .failed(let error): throw error
            }
        }
    }

    /// The first value the publisher sends, awaited, like `firstValue` but throwing instead of
    /// returning nil.
    ///
    /// - Throws: the publisher's failure; ``CombineBridgeError/finishedWithoutValue`` if it
    ///   finishes without a value; `CancellationError` if the awaiting task is cancelled (the
    ///   subscription is cancelled first).
    public var value: Output {
        get async throws {
            switch await firstOutcome() {
            case .value(let value): return value
            case .finished: throw CombineBridgeError.finishedWithoutValue
            case .cancelled: throw CancellationError()
            case .failed(let error): throw error
            }
        }
    }

    fileprivate func firstOutcome() async -> FirstValueSubscriber<Output, Failure>.Outcome {
        let subscriber = FirstValueSubscriber<Output, Failure>()
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                if subscriber.start(continuation) { subscribe(subscriber) }
            }
        } onCancel: {
            subscriber.cancel()
        }
    }
}

extension Publisher where Output: Sendable, Failure == Never {
    /// The first value the publisher sends, awaited; `nil` if it finishes without one. The only
    /// error is `CancellationError`, when the awaiting task is cancelled (the subscription is
    /// cancelled then).
    ///
    /// The same as the general `firstValue`, spelled for `Failure == Never` with a typed
    /// `throws(CancellationError)`.
    public var firstValue: Output? {
        get async throws(CancellationError) {
            switch await firstOutcome() {
            case .value(let value): return value
            case .finished, .failed: return nil
            case .cancelled: throw CancellationError()
            }
        }
    }
}

/// Subscribes for one element and resumes one continuation with whatever comes first: the
/// element, the completion, or the awaiting task's cancellation.
final class FirstValueSubscriber<Input: Sendable, Failure: Error>: Subscriber, Cancellable, @unchecked Sendable {
    // @unchecked: `state` is behind its lock; the continuation is resumed and the subscription
    // called outside it.

    enum Outcome: Sendable {
        case value(Input)
        case finished
        case failed(Failure)
        case cancelled
    }

    private struct State {
        /// Set by `start`, taken by whichever event ends the wait.
        var continuation: UnsafeContinuation<Outcome, Never>?
        var subscription: (any Subscription)?
        /// True once an outcome was decided (or the task was cancelled before `start`).
        var done = false
    }

    private let state = LockedState(State())

    /// Stores the continuation; false (after resuming it) if the task was already cancelled.
    func start(_ continuation: UnsafeContinuation<Outcome, Never>) -> Bool {
        let alreadyCancelled = state.withLock { state -> Bool in
            if state.done { return true }
            state.continuation = continuation
            return false
        }
        if alreadyCancelled { continuation.resume(returning: .cancelled) }
        return !alreadyCancelled
    }

    func receive(subscription: any Subscription) {
        let accepted = state.withLock { state -> Bool in
            guard !state.done, state.subscription == nil else { return false }
            state.subscription = subscription
            return true
        }
        if accepted { subscription.request(.max(1)) } else { subscription.cancel() }
    }

    func receive(_ input: Input) -> Subscribers.Demand {
        let (continuation, subscription) = end()
        subscription?.cancel()
        continuation?.resume(returning: .value(input))
        return .none
    }

    func receive(completion: Subscribers.Completion<Failure>) {
        let (continuation, _) = end()
        switch completion {
        case .finished: continuation?.resume(returning: .finished)
        case .failure(let error): continuation?.resume(returning: .failed(error))
        }
    }

    /// The awaiting task was cancelled.
    func cancel() {
        let (continuation, subscription) = end()
        subscription?.cancel()
        continuation?.resume(returning: .cancelled)
    }

    /// Decides the outcome exactly once: the first caller gets the continuation and subscription.
    private func end() -> (UnsafeContinuation<Outcome, Never>?, (any Subscription)?) {
        state.withLock { state in
            guard !state.done else { return (nil, nil) }
            state.done = true
            defer { state.continuation = nil; state.subscription = nil }
            return (state.continuation, state.subscription)
        }
    }
}

#endif
