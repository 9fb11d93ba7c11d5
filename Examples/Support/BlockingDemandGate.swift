import Foundation

/// Credit-based flow control for a producer that runs on a thread of its own and can be
/// blocked: an `XMLParser` parsing on a thread, a `FileHandle` readability handler on its queue.
///
/// Feed it a stream's demand (`sink.onDemand { gate.add($0) }`: the room in the buffer at first,
/// then one per element the consumer takes), spend one credit per element yielded, and call
/// ``waitForCredit()`` between elements: it blocks the producer's thread while the consumer has
/// no room, so a fast producer never runs more than the buffer's capacity ahead. ``stop()``
/// (from the stream's teardown) wakes the producer for good.
///
/// For a source that can pause without blocking a thread (an event loop, a `FileHandle`, a
/// `DispatchSource`), use `Bridges.DemandGate` instead: it never blocks.
public final class BlockingDemandGate: @unchecked Sendable {  // every field is guarded by `condition`
    private let condition = NSCondition()
    private var credits = 0
    private var stopped = false
    private let onPause: @Sendable () -> Void
    private let onResume: @Sendable () -> Void

    /// `onPause`/`onResume` are called on the producer's thread when it starts and stops waiting.
    public init(onPause: @escaping @Sendable () -> Void = {}, onResume: @escaping @Sendable () -> Void = {}) {
        self.onPause = onPause
        self.onResume = onResume
    }

    /// The consumer can take `count` more elements (saturating: unbounded policies report `Int.max`).
    public func add(_ count: Int) {
        condition.withLock {
            credits = credits > Int.max - count ? Int.max : credits + count
            condition.broadcast()
        }
    }

    /// Records that `count` elements were yielded. Credits never go below zero: the stream
    /// reports demand from its buffer's depth, so elements yielded beyond the credit (a chunk of
    /// lines cannot be un-read) are already counted in the room it reports later.
    public func spend(_ count: Int = 1) {
        condition.withLock { credits = max(0, credits - count) }
    }

    /// Blocks while the consumer has no room. Returns `false` once ``stop()`` was called.
    @discardableResult
    public func waitForCredit() -> Bool {
        condition.lock()
        var waited = false
        while credits <= 0 && !stopped {
            if !waited {
                waited = true
                condition.unlock()
                onPause()
                condition.lock()
                continue
            }
            condition.wait()
        }
        let running = !stopped
        condition.unlock()
        if waited && running { onResume() }
        return running
    }

    /// Wakes a waiting producer for good: every later ``waitForCredit()`` returns `false` at once.
    public func stop() {
        condition.withLock {
            stopped = true
            condition.broadcast()
        }
    }

    public var isStopped: Bool { condition.withLock { stopped } }
}
