import Dispatch
import TestSupport

// Tracked objects and streams for the lifetime tests (WithCompletion, Subscribe, WeakOwner
// suites), which wait on TestSupport's gates and collections: nothing sleeps or spins.
@testable import Bridges

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
