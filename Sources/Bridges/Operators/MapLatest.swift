@available(BridgesTypedSequence, *)
extension AsyncSequence where Self: Sendable, Element: Sendable {
    /// Transforms each element with `transform`, cancelling the transform still running for the
    /// previous element when a new one arrives (Combine's `map` + `switchToLatest`, Kotlin's
    /// `mapLatest`).
    ///
    /// Before (Combine):
    /// <!-- snippet: legacy-body — the legacy code (Swift 5), with a Combine `queries` -->
    /// ```swift
    /// queries.map { q in self.search(q) }.switchToLatest().sink { results in self.render(results) }.store(in: &cancellables)
    /// ```
    /// After:
    /// <!-- snippet: body — in a method of a `@MainActor` view model with `queries` and `search(_:)` -->
    /// ```swift
    /// for await results in queries.mapLatest({ q in await search(q) }) { render(results) }
    /// ```
    ///
    /// - Cancel-previous, exactly once: when an element arrives, the task running the previous
    ///   element's transform is cancelled, and its result is discarded even if the transform ignores
    ///   cancellation; no result is emitted after a newer element has arrived (a result already
    ///   in the stream's buffer stays: it was emitted before the newer element arrived).
    /// - The upstream is iterated eagerly in a task of its own (it must be, to see the next element
    ///   while a transform runs); each transform runs in a new task, off the caller's actor.
    /// - Ends when the upstream has finished and the last transform has emitted; an upstream
    ///   failure ends it at once (cancelling the transform) with that failure. Leaving the loop, or
    ///   cancelling the consumer's task, cancels the upstream and the running transform.
    /// - `buffering` is the policy of the results the consumer has not taken yet (`.unbounded`:
    ///   at most one result per upstream element). A waiting policy keeps every result but cannot
    ///   pause the upstream: this operator must read ahead to cancel.
    /// - Availability: this form, whose stream fails with the upstream's own `Failure`, needs
    ///   `AsyncSequence.Failure` (macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2). Below, the
    ///   same call resolves to the throwing form, whose stream fails with `any Error`.
    @inlinable
    public func mapLatest<Output: Sendable>(
        buffering: BufferingPolicy = .unbounded,
        fileID: String = #fileID,
        line: UInt = #line,
        _ transform: @escaping @Sendable (Element) async -> Output
    ) -> CallbackStream<Output, Failure> {
        _mapLatest(buffering: buffering, fileID: fileID, line: line, mapFailure: { $0 as! Failure }) { element in
            .success(await transform(element))
        }
    }
}

extension AsyncSequence where Self: Sendable, Element: Sendable {
    /// `mapLatest(_:)`, with a transform that
    /// throws: the first error of a current transform ends the stream with it. A transform that
    /// throws because it was cancelled by a newer element is not an error: its result is discarded.
    ///
    /// Available at the package's floor: the stream fails with `any Error` (the upstream's
    /// failure or the transform's). A non-throwing transform takes this form where
    /// `AsyncSequence.Failure` is not available.
    @inlinable
    public func mapLatest<Output: Sendable>(
        buffering: BufferingPolicy = .unbounded,
        fileID: String = #fileID,
        line: UInt = #line,
        _ transform: @escaping @Sendable (Element) async throws -> Output
    ) -> CallbackStream<Output, any Error> {
        _mapLatest(buffering: buffering, fileID: fileID, line: line, mapFailure: { $0 }) { element in
            do { return .success(try await transform(element)) } catch { return .failure(error) }
        }
    }

    /// The one implementation of `mapLatest`: an upstream loop and one task per transform, on a
    /// `CallbackStream`; decisions under one lock (`MapLatestStateMachine`), decided into the stream in the same
    /// critical section, acted on (consumer resumed, teardown run) outside it.
    /// The transform returns a `Result` rather than throwing a typed error: a typed-throws function
    /// type needs the macOS 15 / iOS 18 runtime, and this runs back to macOS 10.15 / iOS 13.
    /// `mapFailure` turns what the upstream's loop threw (only ever the upstream's own failure)
    /// into the stream's failure.
    @usableFromInline
    func _mapLatest<Output: Sendable, F: Error>(
        buffering: BufferingPolicy,
        fileID: String,
        line: UInt,
        mapFailure: @escaping @Sendable (any Error) -> F,
        _ transform: @escaping @Sendable (Element) async -> Result<Output, F>
    ) -> CallbackStream<Output, F> {
        CallbackStream.synchronous(buffering: buffering, fileID: fileID, line: line) { sink in
            let state = LockedState(MapLatestStateMachine<Output, F>())
            let upstream = Task {
                var failure: F?
                var stopped = false  // the operator ended: nothing to emit
                do {
                    try await self._pullEndingOnCancel { element in
                        guard let (generation, superseded) = state.withLock({ $0.elementArrived() }) else {
                            stopped = true
                            return false
                        }
                        superseded?.cancel()
                        let task = Task {
                            guard state.withLock({ $0.mayStart(generation: generation) }) else { return }
                            let result = await transform(element)
                            var outbox = Outbox<Output, F>()
                            state.withLock { machine in
                                if machine.transformFinished(generation: generation, result) {
                                    machine.emissions.decide(into: sink, &outbox)
                                }
                            }
                            outbox.perform()
                        }
                        state.withLock { $0.attach(task, generation: generation) }?.cancel()
                        return true
                    }
                } catch {
                    failure = mapFailure(error)
                }
                if stopped { return }
                var outbox = Outbox<Output, F>()
                let cancel = state.withLock { machine in
                    let (mustEmit, cancel) = machine.upstreamEnded(failure)
                    if mustEmit { machine.emissions.decide(into: sink, &outbox) }
                    return cancel
                }
                cancel?.cancel()
                outbox.perform()
            }
            return Cancellation {
                upstream.cancel()
                state.withLock { $0.terminate() }?.cancel()
            }
        }
    }
}
