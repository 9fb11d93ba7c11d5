import Bridges
import TestSupport

@testable import BridgesCombine

/// An AsyncSequence that counts every `makeAsyncIterator()` and `next()`, produces 0, 1, 2, …
/// up to `count` (or forever), and opens `released` when an iterator is destroyed — which, for
/// an iterator owned by a task, means that task has ended.
struct ProbeSequence: AsyncSequence, Sendable {
    typealias Element = Int

    final class Probe: Sendable {
        let iterators = Counter()
        let nextCalls = Counter()
        let released = Counter()
    }

    let probe = Probe()
    var count: Int = .max
    var failAt: Int? = nil

    final class Token: Sendable {
        let probe: Probe
        init(_ probe: Probe) { self.probe = probe }
        deinit { probe.released.increment() }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let token: Token
        let count: Int
        let failAt: Int?
        var current = 0

        mutating func next() async throws -> Int? {
            token.probe.nextCalls.increment()
            if current == failAt { throw Boom() }
            guard current < count else { return nil }
            // An endless sequence that never suspends would keep a cooperative thread to itself
            // under unlimited demand (the publisher's loop has nothing to wait for): with tests
            // in parallel on 2 cores that starved the tasks meant to cancel it. A scheduling
            // point per element lets them run; it waits for nothing.
            if count == .max { await Task.yield() }
            defer { current += 1 }
            return current
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        probe.iterators.increment()
        return AsyncIterator(token: Token(probe), count: count, failAt: failAt)
    }
}
