/// Records the elements and the end of any `AsyncSequence`, so a test can take them one at a
/// time and assert on what did, and did not, arrive.
///
/// <!-- snippet: test — with a `stream` fed by `source` -->
/// ```swift
/// let recorder = stream.record()
/// #expect(try await recorder.next() == 1)
/// #expect(try await recorder.next() == 2)
/// await recorder.expectNoMoreElements()
/// source.finish()
/// await recorder.expectFinished()
/// ```
///
/// The recorder iterates the sequence in a task of its own, started by `record()`, until the
/// sequence ends or ``cancel()`` is called (or the recorder is released). Waits are bounded by
/// `timeout` of real time: a sequence that never delivers fails the test instead of hanging it.
/// The bound is a safety net, never the way a passing test waits: elements are handed over as
/// soon as they arrive. Inside ``withSerialTasks(isolation:fileID:line:_:)``, ``expectNoMoreElements(fileID:line:)``
/// first waits until tracked tasks are idle, so "nothing more" means nothing more was coming.
@available(BridgesClock, *)
public final class Recorder<Element: Sendable>: Sendable {
    private enum Termination {
        case finished
        case failed(any Error)
    }

    private struct State {
        var received: [Element] = []
        var cursor = 0
        var termination: Termination?
        var change = Gate()
        var task: Task<Void, Never>?
    }

    private let state = LockedState(State())
    private let timeout: Duration

    #if compiler(>=6.2)
    /// Starts recording `sequence`. Prefer `sequence.record()`.
    public convenience init<S: AsyncSequence & SendableMetatype>(
        _ sequence: sending S, timeout: Duration = .seconds(5)
    ) where S.Element == Element, S.AsyncIterator: SendableMetatype {
        self.init(timeout: timeout)
        start(Task { [state] in await Self.pump(sequence, into: state) })
    }
    #else
    /// Starts recording `sequence`. Prefer `sequence.record()`.
    public convenience init<S: AsyncSequence>(_ sequence: sending S, timeout: Duration = .seconds(5))
    where S.Element == Element {
        self.init(timeout: timeout)
        start(Task { [state] in await Self.pump(sequence, into: state) })
    }
    #endif

    private init(timeout: Duration) {
        XCTestFailureRecorder.start()
        self.timeout = timeout
    }

    private func start(_ task: Task<Void, Never>) { state.withLock { $0.task = task } }

    /// Runs in the recording task; holds the state, not the recorder, so that releasing the
    /// recorder cancels the recording.
    private static func pump<S: AsyncSequence>(_ sequence: S, into state: LockedState<State>) async
    where S.Element == Element {
        func record(_ change: (inout State) -> Void) {
            state.withLock { state -> Gate in
                change(&state)
                defer { state.change = Gate() }
                return state.change
            }.open()
        }
        do {
            for try await element in sequence {
                record { $0.received.append(element) }
            }
            record { $0.termination = .finished }
        } catch {
            record { $0.termination = .failed(error) }
        }
    }

    deinit { state.withLock { $0.task }?.cancel() }

    /// Every element received so far, including those already taken with ``next(fileID:line:)``.
    public var elements: [Element] { state.withLock { $0.received } }
    /// Elements received and not yet taken with `next()`.
    public var pendingElements: [Element] { state.withLock { Array($0.received[$0.cursor...]) } }
    /// The sequence has ended, normally or with an error.
    public var isFinished: Bool { state.withLock { $0.termination != nil } }
    /// The error the sequence ended with, if it failed.
    public var failure: (any Error)? {
        state.withLock { if case .failed(let error) = $0.termination { error } else { nil } }
    }

    /// Stops recording: cancels the task that iterates the sequence.
    public func cancel() { state.withLock { $0.task }?.cancel() }

    /// Waits until the recording task has ended (the sequence ended or was cancelled) and returns.
    public func waitForEnd() async { await state.withLock { $0.task }?.value }

    /// The next element not yet taken, waiting until it arrives.
    ///
    /// - Throws: the sequence's error if it failed before another element arrived;
    ///   ``RecorderError/finished`` if it finished instead (recorded as a test failure);
    ///   ``RecorderError/timedOut`` if nothing arrived within the timeout (recorded as a test failure).
    public func next(fileID: String = #fileID, line: UInt = #line) async throws -> Element {
        while true {
            let (element, termination, change) = state.withLock { state -> (Element?, Termination?, Gate) in
                guard state.cursor < state.received.count else { return (nil, state.termination, state.change) }
                defer { state.cursor += 1 }
                return (state.received[state.cursor], nil, state.change)
            }
            if let element { return element }
            switch termination {
            case .failed(let error):
                throw error
            case .finished:
                _reportTestFailure(
                    "expected an element, but the sequence finished after \(elements.count) element(s)", fileID: fileID,
                    line: line)
                throw RecorderError.finished
            case nil:
                if await !change.wait(atMost: timeout) {
                    _reportTestFailure(
                        "expected an element within \(timeout), but none arrived (received \(elements.count) so far)",
                        fileID: fileID, line: line)
                    throw RecorderError.timedOut
                }
            }
        }
    }

    /// Records a test failure if an element arrived that was not taken with `next()`.
    ///
    /// Inside ``withSerialTasks(isolation:fileID:line:_:)`` it first waits until tracked tasks are idle.
    /// Outside, it checks what has been delivered when it is called.
    public func expectNoMoreElements(fileID: String = #fileID, line: UInt = #line) async {
        await settleIfTracked(fileID: fileID, line: line)
        let pending = pendingElements
        if !pending.isEmpty {
            _reportTestFailure("expected no more elements, but received \(pending)", fileID: fileID, line: line)
        }
    }

    /// Waits until the sequence ends and records a test failure unless it finished normally
    /// with every element taken.
    public func expectFinished(fileID: String = #fileID, line: UInt = #line) async {
        switch await termination(fileID: fileID, line: line) {
        case .finished?:
            let pending = pendingElements
            if !pending.isEmpty {
                _reportTestFailure(
                    "the sequence finished, but these elements were not taken with next(): \(pending)", fileID: fileID,
                    line: line)
            }
        case .failed(let error)?:
            _reportTestFailure(
                "expected the sequence to finish, but it failed with \(error)", fileID: fileID, line: line)
        case nil:
            break
        }
    }

    /// Waits until the sequence ends and returns its error; records a test failure if it
    /// finished normally (or did not end within the timeout).
    @discardableResult
    public func expectFailure(fileID: String = #fileID, line: UInt = #line) async -> (any Error)? {
        switch await termination(fileID: fileID, line: line) {
        case .failed(let error)?:
            return error
        case .finished?:
            _reportTestFailure("expected the sequence to fail, but it finished normally", fileID: fileID, line: line)
            return nil
        case nil:
            return nil
        }
    }

    /// Waits until the sequence ends and records a test failure unless it failed with `expected`.
    public func expectFailure<E: Error & Equatable>(_ expected: E, fileID: String = #fileID, line: UInt = #line) async {
        guard let error = await expectFailure(fileID: fileID, line: line) else { return }
        if (error as? E) != expected {
            _reportTestFailure(
                "expected the sequence to fail with \(expected), but it failed with \(error)", fileID: fileID,
                line: line)
        }
    }

    private func termination(fileID: String, line: UInt) async -> Termination? {
        while true {
            let (termination, change) = state.withLock { ($0.termination, $0.change) }
            if let termination { return termination }
            if await !change.wait(atMost: timeout) {
                _reportTestFailure(
                    "expected the sequence to end within \(timeout), but it did not (received \(elements.count) element(s))",
                    fileID: fileID, line: line)
                return nil
            }
        }
    }
}

/// Why a ``Recorder`` could not return an element.
public enum RecorderError: Error, Sendable {
    /// The sequence finished.
    case finished
    /// Nothing arrived within the recorder's timeout.
    case timedOut
}

#if compiler(>=6.2)
@available(BridgesClock, *)
extension AsyncSequence where Self: Sendable, Element: Sendable, AsyncIterator: SendableMetatype {
    /// Starts recording this sequence; see ``Recorder``.
    ///
    /// - Parameter timeout: The most real time any wait of the recorder lasts before it fails
    ///   the test.
    public func record(timeout: Duration = .seconds(5)) -> Recorder<Element> {
        Recorder(self, timeout: timeout)
    }
}
#else
@available(BridgesClock, *)
extension AsyncSequence where Self: Sendable, Element: Sendable {
    /// Starts recording this sequence; see ``Recorder``.
    ///
    /// - Parameter timeout: The most real time any wait of the recorder lasts before it fails
    ///   the test.
    public func record(timeout: Duration = .seconds(5)) -> Recorder<Element> {
        Recorder(self, timeout: timeout)
    }
}
#endif
