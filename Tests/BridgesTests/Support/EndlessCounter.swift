import Dispatch
import TestSupport
import Testing

@testable import Bridges

/// An endless sequence of 0, 1, 2, … that stops when its task is cancelled, and whose iterator's
/// release opens a gate (so a test knows the loop is over).
struct EndlessCounter: AsyncSequence, Sendable {
    let released: Gate

    struct AsyncIterator: AsyncIteratorProtocol {
        let signal: DeinitSignal
        var next = 0
        mutating func next() async -> Int? {
            guard !Task.isCancelled else { return nil }
            defer { next += 1 }
            return next
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(signal: DeinitSignal(released)) }
}
