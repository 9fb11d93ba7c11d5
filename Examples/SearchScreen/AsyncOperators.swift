import Bridges
import Foundation

// Example code, not part of Bridges: the small operators this screen needs that Bridges does not
// ship (swift-async-algorithms has `removeDuplicates()`, `chain` for prepend, and `combineLatest`),
// each a `CallbackStream` so that leaving the loop tears everything down. The time-based one,
// `debounce(for:clock:buffering:)`, and the cancel-previous `collectLatest(weak:in:)` are Bridges' own.

@available(BridgesTypedSequence, *)  // AsyncSequence.Failure
extension AsyncSequence where Self: Sendable, Element: Sendable, Failure == Never {
    /// Skips an element equal to the one before it.
    func removeDuplicates() -> CallbackStream<Element, Never> where Element: Equatable {
        CallbackStream(buffering: .unbounded) { sink in
            let upstream = Task {
                var last: Element?
                for await element in self where element != last {
                    last = element
                    sink.yield(element)
                }
                sink.finish()
            }
            return upstream.cancellation
        }
    }

    /// Emits `first` at once, then the upstream's elements.
    func prepend(_ first: Element) -> CallbackStream<Element, Never> {
        CallbackStream(buffering: .unbounded) { sink in
            sink.yield(first)
            let upstream = Task {
                for await element in self { sink.yield(element) }
                sink.finish()
            }
            return upstream.cancellation
        }
    }
}

/// The latest of each once both have produced one; ends when both have ended. The pair is
/// built and yielded under one lock, so pairs leave in the order their inputs arrived (building
/// "latest" out of separately scheduled tasks is how combineLatest ends up emitting stale pairs).
@available(BridgesTypedSequence, *)  // AsyncSequence.Failure
func combineLatest<A: AsyncSequence & Sendable, B: AsyncSequence & Sendable>(_ a: A, _ b: B) -> CallbackStream<(A.Element, B.Element), Never>
    where A.Element: Sendable, B.Element: Sendable, A.Failure == Never, B.Failure == Never
{
    CallbackStream(buffering: .unbounded) { sink in
        let state = ExampleLockedValue((a: A.Element?.none, b: B.Element?.none, running: 2))
        func finishOne() { if state.update({ $0.running -= 1; return $0.running }) == 0 { sink.finish() } }
        let taskA = Task {
            for await value in a {
                state.update { $0.a = value; if let b = $0.b { sink.yield((value, b)) } }
            }
            finishOne()
        }
        let taskB = Task {
            for await value in b {
                state.update { $0.b = value; if let a = $0.a { sink.yield((a, value)) } }
            }
            finishOne()
        }
        return Cancellation { taskA.cancel(); taskB.cancel() }
    }
}

/// A value behind a lock, for the operators above.
final class ExampleLockedValue<Value>: @unchecked Sendable {  // every access takes `lock`
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func update<R>(_ body: (inout Value) -> R) -> R { lock.withLock { body(&value) } }
}
