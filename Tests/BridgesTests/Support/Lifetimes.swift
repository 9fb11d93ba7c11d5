import Dispatch
import TestSupport

// Gates, recorders and tracked objects for the lifetime tests (WithCompletion, Subscribe,
// WeakOwner suites). Everything is awaited through continuations: nothing sleeps or spins.
@testable import Bridges

/// Records values from any thread; `wait(count:)` returns once that many were recorded.
final class LifetimeRecorder<Value: Sendable>: Sendable {
    private struct State {
        var values: [Value] = []
        var waiters: [(count: Int, continuation: UnsafeContinuation<Void, Never>)] = []
    }

    private let state = LockedState<State>(State())

    init() {}

    func record(_ value: Value) {
        let ready = state.withLock { state -> [UnsafeContinuation<Void, Never>] in
            state.values.append(value)
            let count = state.values.count
            let ready = state.waiters.filter { $0.count <= count }.map(\.continuation)
            state.waiters.removeAll { $0.count <= count }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    var values: [Value] { state.withLock { $0.values } }
    var count: Int { state.withLock { $0.values.count } }

    func wait(count: Int) async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.values.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}

/// An object whose deallocation opens a gate: captured by a closure (and by nothing else) to
/// observe the closure's release, e.g. `{ [end = DeinitSignal(workEnded)] in _ = end; … }`.
final class DeinitSignal: Sendable {
    let gate: Gate
    init(_ gate: Gate) { self.gate = gate }
    deinit { gate.open() }
}

/// An endless, quiet AsyncStream whose teardown (`onTermination`) opens a gate.
struct TrackedStream<Element: Sendable>: Sendable {
    let stream: AsyncStream<Element>
    let continuation: AsyncStream<Element>.Continuation
    let tornDown = Gate()

    init(_: Element.Type = Element.self) {
        (stream, continuation) = AsyncStream.makeStream(of: Element.self)
        continuation.onTermination = { [tornDown] _ in tornDown.open() }
    }
}

private let mainQueueKey: DispatchSpecificKey<UInt8> = {
    let key = DispatchSpecificKey<UInt8>()
    DispatchQueue.main.setSpecific(key: key, value: 1)
    return key
}()

/// Whether the caller runs on the main actor's executor (the main dispatch queue), without
/// trapping like `MainActor.assertIsolated()` would. (Under `swift test` on Linux the main
/// queue is not always drained by the main thread, so `Thread.isMainThread` cannot tell.)
func isOnMainActor() -> Bool {
    DispatchQueue.getSpecific(key: mainQueueKey) == 1
}
