/// A legacy completion-handler API that the test controls, recording what the code under test
/// did to it.
///
/// The code under test calls ``call(_:completion:)`` (or ``call(completion:)`` when there is
/// no request), exactly like a years-old client method; the test then completes the call,
/// fails it, calls back twice, or drops the handler, and checks whether cancellation reached it:
///
/// <!-- snippet: test -->
/// ```swift
/// let api = FakeCompletionAPI<String, [Item]>()
/// let task = Task { try await withCallback { done in api.call("shoes", completion: done) } }
/// let call = try await api.nextInvocation()      // deterministic: the task has called the API
/// #expect(call.request == "shoes")
/// call.complete(with: [shoe])
/// #expect(try await task.value == [shoe])
/// ```
///
/// The completion runs synchronously on the thread that calls `complete`, `fail` or
/// `callTwice`, like an API that calls back on the caller's queue. After completing or
/// dropping, the fake no longer retains the completion handler.
///
/// `Value` need not be `Sendable`, as `withCallback`'s need not: the fake never stores a value,
/// and the test hands each one over (`sending`) to the call it completes, which passes it on
/// once to the code under test.
///
/// The completion handler need not be `Sendable` either, as a Swift 5 SDK's are not: a fake of
/// the SDK's own protocol passes its handler straight on.
/// ```swift
/// final class FakeCitySearch: LegacyCitySearch {
///     let api = FakeCompletionAPI<String, [String]>()
///     func searchCities(matching query: String, completion: @escaping (Result<[String], any Error>) -> Void) {
///         api.call(query, completion: completion)
///     }
/// }
/// ```
/// The fake calls the handler on the thread that calls `complete`, `fail` or `callTwice`, once,
/// as a legacy API calls back on a queue of its own: a handler that must run on an actor hops
/// there itself (a bridge's `done` is `Sendable` and may be called from anywhere).
public final class FakeCompletionAPI<Request: Sendable, Value>: Sendable {
    public typealias Completion = (Result<Value, any Error>) -> Void

    /// One call the code under test made.
    public final class Invocation: Sendable, CustomStringConvertible {
        private struct State {
            var completion: Completion?
            var outcome: String?
        }

        /// The position of this call among all calls to the API, from 0.
        public let index: Int
        /// What the code under test passed.
        public let request: Request
        private let state: LockedState<State>
        private let cancelled = Gate()

        init(index: Int, request: Request, completion: @escaping Completion) {
            self.index = index
            self.request = request
            // Vouched for: the handler is reached only through the lock, taken out once (by
            // `complete`, `fail`, `callTwice` or `drop`) and called by the test's thread, as a
            // legacy API calls a handler that it was given from its own queue.
            self.state = LockedState(vouchingFor: State(completion: completion))
        }

        /// The `Cancellation` this call returned has run: cancellation reached the legacy API.
        public var isCancelled: Bool { cancelled.isOpen }
        /// The test has completed, failed or dropped this call.
        public var isFinished: Bool { state.withLock { $0.outcome != nil } }
        public var description: String { "invocation #\(index) (\(request))" }

        /// Calls the completion handler with `value`.
        public func complete(with value: sending Value, fileID: String = #fileID, line: UInt = #line) {
            take("completed", fileID: fileID, line: line)?(.success(value))
        }

        /// Calls the completion handler with `error`.
        public func fail(_ error: any Error, fileID: String = #fileID, line: UInt = #line) {
            take("failed", fileID: fileID, line: line)?(.failure(error))
        }

        /// Calls the completion handler twice: a buggy legacy API. A bridge ignores the
        /// second call and reports `BridgeDiagnostic.Kind.callbackCalledTwice`.
        public func callTwice(with value: sending Value, fileID: String = #fileID, line: UInt = #line) {
            guard let completion = take("called twice", fileID: fileID, line: line) else { return }
            completion(.success(value))
            completion(.success(value))
        }

        /// Releases the completion handler without calling it: a buggy legacy API that forgets
        /// to call back. A bridge then throws `BridgeError.callbackDropped` instead of hanging.
        public func drop(fileID: String = #fileID, line: UInt = #line) {
            _ = take("dropped", fileID: fileID, line: line)  // released when this returns
        }

        /// Waits until cancellation reaches this call; returns `false` (and records a test
        /// failure) if it does not within `timeout` of real time.
        @available(BridgesClock, *)
        @discardableResult
        public func waitForCancellation(
            timeout: Duration = .seconds(5), fileID: String = #fileID, line: UInt = #line
        ) async -> Bool {
            if await cancelled.wait(atMost: timeout) { return true }
            _reportTestFailure("cancellation did not reach \(self) within \(timeout)", fileID: fileID, line: line)
            return false
        }

        func cancel() { cancelled.open() }

        private func take(_ outcome: String, fileID: String, line: UInt) -> Completion? {
            let (completion, previous) = state.withLock { state -> (Completion?, String?) in
                guard state.outcome == nil else { return (nil, state.outcome) }
                state.outcome = outcome
                defer { state.completion = nil }
                return (state.completion, nil)
            }
            if let previous {
                _reportTestFailure(
                    "the test tried to finish \(self) again (\(outcome)), but it was already \(previous); use callTwice(with:) to simulate a double callback",
                    fileID: fileID, line: line
                )
            }
            return completion
        }
    }

    private let arrivals = Arrivals<Invocation>()

    public init() { XCTestFailureRecorder.start() }

    // MARK: - Called by the code under test

    /// The legacy entry point: starts a call and returns a token that cancels it.
    /// Thread-safe; the completion is called later, when the test decides.
    @discardableResult
    public func call(_ request: Request, completion: @escaping Completion) -> Cancellation {
        let invocation = arrivals.append { Invocation(index: $0, request: request, completion: completion) }
        return Cancellation { [invocation] in invocation.cancel() }
    }

    // MARK: - Inspected and driven by the test

    /// Every call so far, in order.
    public var invocations: [Invocation] { arrivals.all }
    public var invocationCount: Int { invocations.count }
    /// Whether cancellation reached any call.
    public var cancellationReached: Bool { invocations.contains { $0.isCancelled } }
    /// How many calls were cancelled.
    public var cancellationCount: Int { invocations.filter(\.isCancelled).count }

    /// The next call the test has not yet taken, in call order, waiting until the code under
    /// test makes it: the deterministic way to know that a task has reached the API.
    ///
    /// - Throws: ``FakeTimeout`` (after recording a test failure) if no call arrives within
    ///   `timeout` of real time; a safety net, so a broken test fails instead of hanging.
    @available(BridgesClock, *)
    public func nextInvocation(
        timeout: Duration = .seconds(5), fileID: String = #fileID, line: UInt = #line
    ) async throws -> Invocation {
        if let invocation = await arrivals.next(timeout: timeout) { return invocation }
        let message = "expected the code under test to call the API (call #\(invocationCount)) within \(timeout)"
        _reportTestFailure(message, fileID: fileID, line: line)
        throw FakeTimeout(message)
    }

    /// Completes the oldest call that is still pending with `value`.
    public func complete(with value: sending Value, fileID: String = #fileID, line: UInt = #line) {
        oldestPending(fileID: fileID, line: line)?.complete(with: value, fileID: fileID, line: line)
    }

    /// Fails the oldest call that is still pending with `error`.
    public func fail(_ error: any Error, fileID: String = #fileID, line: UInt = #line) {
        oldestPending(fileID: fileID, line: line)?.fail(error, fileID: fileID, line: line)
    }

    /// Calls back the oldest pending call twice with `value`.
    public func callTwice(with value: sending Value, fileID: String = #fileID, line: UInt = #line) {
        oldestPending(fileID: fileID, line: line)?.callTwice(with: value, fileID: fileID, line: line)
    }

    /// Releases the oldest pending call's completion handler without calling it.
    public func drop(fileID: String = #fileID, line: UInt = #line) {
        oldestPending(fileID: fileID, line: line)?.drop(fileID: fileID, line: line)
    }

    private func oldestPending(fileID: String, line: UInt) -> Invocation? {
        if let invocation = invocations.first(where: { !$0.isFinished }) { return invocation }
        _reportTestFailure(
            "no pending call to finish: the code under test made \(invocationCount) call(s) and all are finished",
            fileID: fileID, line: line
        )
        return nil
    }
}

extension FakeCompletionAPI where Request == Void {
    /// The legacy entry point for an API that takes no request.
    @discardableResult
    public func call(completion: @escaping Completion) -> Cancellation {
        call((), completion: completion)
    }
}

/// A fake waited for something the code under test never did within the bound.
public struct FakeTimeout: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
