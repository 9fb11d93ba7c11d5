import Bridges

/// A small debounce over any AsyncSequence, written for the search-as-you-type tests
/// (SearchAsYouTypeTests). BridgesTesting ships no operators; this shows that time-based code written
/// against `some Clock<Duration>` is driven by `TestClock` without changes.
///
/// Emits an element once `interval` has passed on `clock` without a newer one. When the
/// upstream finishes, the pending element (if any) is still emitted after its interval.
func debounce<Upstream: AsyncSequence & Sendable, C: Clock>(
    _ upstream: Upstream, for interval: Duration, clock: C
) -> AsyncStream<Upstream.Element> where Upstream.Element: Sendable, C.Duration == Duration {
    AsyncStream { continuation in
        let task = Task {
            var timer: Task<Void, Never>?
            do {
                for try await value in upstream {
                    timer?.cancel()
                    timer = Task {
                        do { try await clock.sleep(for: interval) } catch { return }
                        if !Task.isCancelled { continuation.yield(value) }
                    }
                }
            } catch {}
            let last = timer
            await withTaskCancellationHandler {
                await last?.value
            } onCancel: {
                last?.cancel()
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
    }
}
