extension AsyncSequence where Self: Sendable, Element: Sendable {
    /// Emits an element once `interval` has passed on `clock` without a newer one (Combine's and
    /// swift-async-algorithms' `debounce`), on any `Clock`: `ContinuousClock()` in the app, a
    /// `TestClock` in tests.
    ///
    /// Before (Combine):
    /// ```swift
    /// searchText.debounce(for: .milliseconds(300), scheduler: DispatchQueue.main)
    /// ```
    /// After:
    /// ```swift
    /// searchText.debounce(for: .milliseconds(300), clock: clock)   // some Clock<Duration>
    /// ```
    ///
    /// - The window of an element starts when it arrives (`clock.now` then), so with a `TestClock`
    ///   an element sent at t=0 is not emitted at 299 ms and is emitted at 300 ms.
    /// - When the upstream finishes, the pending element (if any) is emitted at once, then the
    ///   stream finishes: the last value typed is never lost (as Combine and swift-async-algorithms
    ///   do). When the upstream fails, the pending element is dropped and the stream fails.
    /// - The upstream is iterated eagerly in a task of its own. One timer task per burst sleeps on
    ///   `clock`: an element arriving meanwhile only moves the deadline (the timer, on waking,
    ///   sleeps again until it). Leaving the loop, or cancelling the consumer's task, cancels the
    ///   upstream and the timer: no sleeper is left on the clock.
    /// - `buffering`: the policy of emitted elements the consumer has not taken yet.
    /// - With swift-async-algorithms also imported, its `debounce(for:tolerance:clock:)` has the
    ///   same spelling: the result type chooses (`let s: CallbackStream<…> = …`).
    ///
    /// - Precondition: `interval` is not negative.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)  // Clock (13), and AsyncSequence.Failure (15)
    @inlinable
    public func debounce<C: Clock>(
        for interval: C.Duration,
        tolerance: C.Duration? = nil,
        clock: C,
        buffering: BufferingPolicy = .unbounded,
        fileID: String = #fileID,
        line: UInt = #line
    ) -> CallbackStream<Element, Failure> {
        precondition(interval >= .zero, "debounce(for:clock:): interval must not be negative, got \(interval)")
        return CallbackStream(buffering: buffering, fileID: fileID, line: line) { sink in
            let state = LockedState(DebounceStateMachine<Element, Failure, C.Instant>())
            let upstream = Task {
                var failure: Failure?
                do {
                    for try await element in self {
                        let deadline = clock.now.advanced(by: interval)
                        switch state.withLock({ $0.elementArrived(element, deadline: deadline) }) {
                        case .stop:
                            return
                        case .none:
                            continue
                        case .startTimer:
                            let timer = Task {
                                var sleptUntil: C.Instant?
                                while true {
                                    var outbox = Outbox<Element, Failure>()
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
                        }
                    }
                } catch {
                    failure = (error as! Failure)  // the loop rethrows only the upstream's own error
                }
                var outbox = Outbox<Element, Failure>()
                let timer = state.withLock { machine in
                    let (mustDeliver, timer) = machine.upstreamEnded(failure)
                    if mustDeliver { machine.emissions.decide(into: sink, &outbox) }
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
