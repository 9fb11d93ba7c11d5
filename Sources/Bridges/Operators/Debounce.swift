extension AsyncSequence where Self: Sendable, Element: Sendable {
    /// Emits an element once `interval` has passed on `clock` without a newer one (Combine's and
    /// swift-async-algorithms' `debounce`), on any `Clock`: `ContinuousClock()` in the app, a
    /// `TestClock` in tests, into a `CallbackStream` with the buffering policy you name.
    ///
    /// Before (Combine):
    /// <!-- snippet: legacy-body — the legacy code (Swift 5), with a Combine `searchText` -->
    /// ```swift
    /// let debounced = searchText.debounce(for: .milliseconds(300), scheduler: DispatchQueue.main)
    /// ```
    /// After:
    /// <!-- snippet: body — in a method of a `@MainActor` view model with `searchText` and `clock` -->
    /// ```swift
    /// let debounced = searchText.debounce(for: .milliseconds(300), clock: clock, buffering: .unbounded)
    /// ```
    ///
    /// - `buffering` (no default) is the policy of emitted elements the consumer has not taken yet.
    ///   It is also what makes the call Bridges': swift-async-algorithms' `debounce(for:tolerance:clock:)`
    ///   has the same words without it, so with both modules imported (in any file of the module) a
    ///   call written as swift-async-algorithms documents it is theirs and one with `buffering:` is
    ///   this one, whatever the context (`for await` in a `Task`, a result builder, an autoclosure).
    /// - The window of an element starts when it arrives (`clock.now` then), so with a `TestClock`
    ///   an element sent at t=0 is not emitted at 299 ms and is emitted at 300 ms.
    /// - When the upstream finishes, the pending element (if any) is emitted at once, then the
    ///   stream finishes: the last value typed is never lost (as Combine and swift-async-algorithms
    ///   do). When the upstream fails, the pending element is dropped and the stream fails.
    /// - The upstream is iterated eagerly in a task of its own. One timer task per burst sleeps on
    ///   `clock`: an element arriving meanwhile only moves the deadline (the timer, on waking,
    ///   sleeps again until it). Leaving the loop, or cancelling the consumer's task, cancels the
    ///   upstream and the timer: no sleeper is left on the clock.
    ///
    /// - Precondition: `interval` is not negative; otherwise the program stops with a message naming the
    ///   argument and the call's file and line, in every build configuration.
    /// - Availability: macOS 13, iOS 16, tvOS 16, watchOS 9 (`Clock`). This form, whose stream
    ///   fails with the upstream's own `Failure`, needs `AsyncSequence.Failure` (macOS 15, iOS 18,
    ///   tvOS 18, watchOS 11, visionOS 2); below, the same call gives a stream that fails with
    ///   `any Error`.
    @available(BridgesTypedSequence, *)
    @inlinable
    public func debounce<C: Clock>(
        for interval: C.Duration,
        tolerance: C.Duration? = nil,
        clock: C,
        buffering: BufferingPolicy,
        fileID: String = #fileID,
        line: UInt = #line
    ) -> CallbackStream<Element, Failure> {
        _debounce(
            for: interval, tolerance: tolerance, clock: clock, buffering: buffering, fileID: fileID, line: line,
            mapFailure: { $0 as! Failure }
        )
    }

    /// ``debounce(for:tolerance:clock:buffering:fileID:line:)`` where `AsyncSequence.Failure` is
    /// not available (macOS 13–14, iOS 16–17, tvOS 16–17, watchOS 9–10): the stream fails with
    /// `any Error`, the upstream's failure. The behaviour is the same.
    @available(BridgesClock, *)
    @_disfavoredOverload
    @inlinable
    public func debounce<C: Clock>(
        for interval: C.Duration,
        tolerance: C.Duration? = nil,
        clock: C,
        buffering: BufferingPolicy,
        fileID: String = #fileID,
        line: UInt = #line
    ) -> CallbackStream<Element, any Error> {
        _debounce(
            for: interval, tolerance: tolerance, clock: clock, buffering: buffering, fileID: fileID, line: line,
            mapFailure: { $0 }
        )
    }

    /// The one implementation of `debounce`. `mapFailure` turns what the upstream's loop threw
    /// (only ever the upstream's own failure) into the stream's failure.
    @available(BridgesClock, *)
    @usableFromInline
    func _debounce<C: Clock, F: Error>(
        for interval: C.Duration,
        tolerance: C.Duration?,
        clock: C,
        buffering: BufferingPolicy,
        fileID: String,
        line: UInt,
        mapFailure: @escaping @Sendable (any Error) -> F
    ) -> CallbackStream<Element, F> {
        if interval < .zero {
            _argumentError(
                "debounce(for:clock:buffering:): interval must not be negative, got \(interval)", fileID: fileID,
                line: line)
        }
        return CallbackStream.synchronous(buffering: buffering, fileID: fileID, line: line) { sink in
            let state = LockedState(DebounceStateMachine<Element, F, C.Instant>())
            let upstream = Task {
                var failure: F?
                var stopped = false  // the operator ended: nothing to emit
                do {
                    try await self._pullEndingOnCancel { element in
                        let deadline = clock.now.advanced(by: interval)
                        switch state.withLock({ $0.elementArrived(element, deadline: deadline) }) {
                        case .stop:
                            stopped = true
                            return false
                        case .none:
                            return true
                        case .startTimer:
                            let timer = Task {
                                var sleptUntil: C.Instant?
                                while true {
                                    var outbox = Outbox<Element, F>()
                                    let action = state.withLock { machine in
                                        let action = machine.timerTick(sleptUntil: sleptUntil)
                                        if case .fired(true) = action { machine.emissions.decide(into: sink, &outbox) }
                                        return action
                                    }
                                    switch action {
                                    case .sleep(let deadline):
                                        do { try await clock.sleep(until: deadline, tolerance: tolerance) } catch {
                                            return
                                        }
                                        sleptUntil = deadline
                                    case .fired:
                                        outbox.perform()
                                        return
                                    case .stop:
                                        return
                                    }
                                }
                            }
                            state.withLock { $0.attach(timer) }?.cancel()
                            return true
                        }
                    }
                } catch {
                    failure = mapFailure(error)
                }
                if stopped { return }
                var outbox = Outbox<Element, F>()
                let timer = state.withLock { machine in
                    let (mustEmit, timer) = machine.upstreamEnded(failure)
                    if mustEmit { machine.emissions.decide(into: sink, &outbox) }
                    return timer
                }
                timer?.cancel()
                outbox.perform()
            }
            return Cancellation {
                upstream.cancel()
                state.withLock { $0.terminate() }?.cancel()
            }
        }
    }
}
