/// A one-way latch: `wait()` suspends until `open()` has been called (at once if it was).
///
/// Waiting is bounded: `wait(atMost:)` gives up after a duration of real time and returns
/// `false`, so a helper can fail the test instead of hanging. The bound is a safety net only:
/// nothing in BridgesTesting sleeps to wait for work.
final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var nextID = 0
        var waiters: [Int: UnsafeContinuation<Bool, Never>] = [:]
        /// Waits that timed out or were cancelled before their continuation was registered.
        var abandoned: Set<Int> = []
    }

    private let state = LockedState(State())

    var isOpen: Bool { state.withLock { $0.isOpen } }

    func open() {
        let waiters = state.withLock { state -> [UnsafeContinuation<Bool, Never>] in
            state.isOpen = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Waits until the gate opens; returns at once when the waiting task is cancelled.
    func wait() async {
        _ = await wait(timer: nil)
    }

    /// Waits until the gate opens, whether or not the waiting task is cancelled: for handshakes
    /// that must complete to leave their owner consistent (``TestClock``'s wake-ups).
    func waitIgnoringCancellation() async {
        let id = state.withLock { state -> Int? in
            if state.isOpen { return nil }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return }
        _ = await withUnsafeContinuation { (continuation: UnsafeContinuation<Bool, Never>) in
            let openNow = state.withLock { state -> Bool in
                if state.isOpen { return true }
                state.waiters[id] = continuation
                return false
            }
            if openNow { continuation.resume(returning: true) }
        }
    }

    /// Waits until the gate opens or `timeout` of real time has passed (then returns `false`),
    /// or the waiting task is cancelled (then returns `isOpen`).
    @available(BridgesClock, *)
    func wait(atMost timeout: Duration) async -> Bool {
        await wait(timer: { try await Task.sleep(for: timeout) })
    }

    private func wait(timer: (@Sendable () async throws -> Void)?) async -> Bool {
        let id = state.withLock { state -> Int? in
            if state.isOpen { return nil }
            state.nextID += 1
            return state.nextID
        }
        guard let id else { return true }
        let timerTask = timer.map { sleep in
            Task { [weak self] in
                do { try await sleep() } catch { return }
                self?.giveUp(id, opened: false)
            }
        }
        defer {
            timerTask?.cancel()
            state.withLock { _ = $0.abandoned.remove(id) }
        }
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Bool, Never>) in
                let resumeNow = state.withLock { state -> Bool? in
                    if state.abandoned.remove(id) != nil || state.isOpen { return state.isOpen }
                    state.waiters[id] = continuation
                    return nil
                }
                if let resumeNow { continuation.resume(returning: resumeNow) }
            }
        } onCancel: {
            giveUp(id, opened: nil)
        }
    }

    /// Ends wait `id` early (timeout or cancellation), also when it has not registered yet.
    private func giveUp(_ id: Int, opened: Bool?) {
        let (waiter, isOpen) = state.withLock { state -> (UnsafeContinuation<Bool, Never>?, Bool) in
            guard let waiter = state.waiters.removeValue(forKey: id) else {
                if !state.isOpen { state.abandoned.insert(id) }
                return (nil, state.isOpen)
            }
            return (waiter, state.isOpen)
        }
        waiter?.resume(returning: opened ?? isOpen)
    }
}
