import AsyncAlgorithms
import Bridges
import BridgesTesting
import Clocks

/// What the calls of EveryOperator.swift work on: one of each kind of Bridges sequence, and the
/// other arguments swift-async-algorithms' and Bridges' operators take.
struct Inputs: Sendable {
    let stream: AsyncStream<Int>
    let callbackStream: CallbackStream<Int, Never>
    let broadcast: Broadcast<Int>
    let shared: SharedSequence<Int, Never>
    /// A second sequence, for `merge`, `zip`, `combineLatest`.
    let other: AsyncStream<Int>
    let channel: AsyncChannel<Int>
    /// A signal for `chunks(ofCount:or:)` and `chunked(by:)`.
    let signal: AsyncStream<Void>
    /// swift-clocks' clock: both libraries take any `Clock`.
    let clock: Clocks.TestClock<Duration>
    let owner: Owner
    let bag: CancellationBag

    init() {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        continuation.finish()
        self.stream = stream
        callbackStream = CallbackStream { sink in
            sink.finish()
            return Cancellation()
        }
        broadcast = Broadcast()
        shared = stream.shared()
        other = AsyncStream { $0.finish() }
        channel = AsyncChannel()
        signal = AsyncStream { $0.finish() }
        clock = Clocks.TestClock()
        owner = Owner()
        bag = CancellationBag()
    }
}

/// The owner of a weak-owner loop (`forEach(weak:in:)`, `collectLatest(weak:in:)`).
final class Owner: Sendable {}

struct Boom: Error {
    /// `mapError`'s transform on a sequence that cannot fail.
    init(never: Never) { switch never {} }
    init() {}
}

/// A result builder whose statements are any of the calls: a context where each call is
/// resolved as a statement of the builder, through an overloaded `buildExpression`.
@resultBuilder enum Built {
    static func buildExpression(_ sequence: some AsyncSequence) -> [Any] { [sequence] }
    static func buildExpression(_ token: Cancellation) -> [Any] { [token] }
    static func buildExpression<Element>(_ recorder: Recorder<Element>) -> [Any] { [recorder] }
    static func buildExpression(_ value: Any) -> [Any] { [value] }
    static func buildBlock(_ parts: [Any]...) -> [Any] { parts.flatMap { $0 } }
}

func built(@Built _ body: () -> [Any]) -> [Any] { body() }

/// An autoclosure: its argument is resolved as the closure's result.
func later<T>(_ make: @autoclosure () -> T) -> T { make() }

/// Uses an element in a loop's body (the loop that crashed the compiler uses its element).
func use<T>(_ element: T) {}
