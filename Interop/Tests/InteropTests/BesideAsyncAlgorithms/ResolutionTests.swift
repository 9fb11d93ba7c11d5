import AsyncAlgorithms
import Bridges
import BridgesTesting
import Clocks
import ConcurrencyExtras
import Testing

/// Which library a `debounce` call resolves to, with both imported, in each context: a call
/// written as swift-async-algorithms documents it is theirs, one with `buffering:` is Bridges'.
/// (EveryOperator.swift proves every such call compiles; these check where it went.)
extension InteropTests {
    @Suite struct ResolutionTests {
        typealias AAADebounce<Base: AsyncSequence & Sendable> = AsyncDebounceSequence<Base, ContinuousClock>
        where Base.Element: Sendable

        @Test func debounce_writtenAsAsyncAlgorithmsDocumentsIt_isAsyncAlgorithms_inEveryContext() async {
            let inputs = Inputs()
            let stream = inputs.stream
            let callbackStream = inputs.callbackStream
            let shared = inputs.shared

            let bound = stream.debounce(for: .seconds(1), clock: ContinuousClock())
            #expect(type(of: bound) == AAADebounce<AsyncStream<Int>>.self)
            #expect(
                type(of: callbackStream.debounce(for: .seconds(1), clock: ContinuousClock()))
                    == AAADebounce<CallbackStream<Int, Never>>.self)
            #expect(type(of: later(shared.debounce(for: .seconds(1)))) == AAADebounce<SharedSequence<Int, Never>>.self)
            let inBuilder = built {
                stream.debounce(for: .seconds(1), clock: ContinuousClock())
                inputs.broadcast.stream().debounce(for: .seconds(1), tolerance: .zero, clock: ContinuousClock())
            }
            #expect(type(of: inBuilder[0]) == AAADebounce<AsyncStream<Int>>.self)
            #expect(type(of: inBuilder[1]) == AAADebounce<CallbackStream<Int, Never>>.self)
            let inTask = await Task {
                let debounced = stream.debounce(for: .seconds(1), clock: ContinuousClock())
                return "\(type(of: debounced))"
            }.value
            #expect(inTask == "\(AAADebounce<AsyncStream<Int>>.self)")
        }

        @Test func debounce_withBuffering_isBridges_inEveryContext() async {
            let inputs = Inputs()
            let stream = inputs.stream
            let shared = inputs.shared

            let bound = stream.debounce(for: .seconds(1), clock: ContinuousClock(), buffering: .latest)
            #expect(type(of: bound) == CallbackStream<Int, Never>.self)
            #expect(
                type(of: shared.debounce(for: .seconds(1), clock: inputs.clock, buffering: .unbounded))
                    == CallbackStream<Int, Never>.self)
            #expect(
                type(
                    of: later(
                        inputs.broadcast.stream().debounce(for: .seconds(1), clock: inputs.clock, buffering: .latest)))
                    == CallbackStream<Int, Never>.self)
            let inBuilder = built {
                stream.debounce(for: .seconds(1), tolerance: .zero, clock: ContinuousClock(), buffering: .latest)
            }
            #expect(type(of: inBuilder[0]) == CallbackStream<Int, Never>.self)
            let inTask = await Task {
                let debounced = stream.debounce(for: .seconds(1), clock: ContinuousClock(), buffering: .latest)
                return "\(type(of: debounced))"
            }.value
            #expect(inTask == "\(CallbackStream<Int, Never>.self)")
        }

        /// swift-clocks' `.immediate` and `.test`, as its documentation writes them, are swift-clocks'
        /// where BridgesTesting is imported too (BridgesTesting's are disfavored); a type context
        /// still reaches BridgesTesting's.
        @Test func clockShorthands_whereBothAreImported_areSwiftClocks() async {
            let stream = Inputs().stream
            let immediate = stream.debounce(for: .seconds(1), clock: .immediate)
            #expect(
                type(of: immediate) == AsyncDebounceSequence<AsyncStream<Int>, Clocks.ImmediateClock<Duration>>.self)
            let inTask = await Task {
                let test = stream.debounce(for: .seconds(1), clock: .test, buffering: .latest)
                return "\(type(of: test))"
            }.value
            #expect(inTask == "\(CallbackStream<Int, Never>.self)")
            #expect(clockType(.test) == ObjectIdentifier(Clocks.TestClock<Duration>.self))
            #expect(clockType(.immediate) == ObjectIdentifier(Clocks.ImmediateClock<Duration>.self))
            let bridgesClock: BridgesTesting.TestClock = .test
            #expect(type(of: bridgesClock) == BridgesTesting.TestClock.self)
        }

        /// The shape that crashed the compiler, in a `@MainActor` view model, run: both libraries'
        /// `debounce` on one text (a `Broadcast`), each in its own `Task { for await … }`, on
        /// swift-clocks' `TestClock` (it never advances here, so only the text's end emits: the last
        /// text, at once, in both libraries).
        @MainActor @Test func bothDebounces_inAViewModelsTasks_emitTheLastTextWhenTheTextEnds() async {
            weak var released: SearchModel?
            do {
                let model = SearchModel()
                released = model
                let text = Broadcast<String>()
                let clock = Clocks.TestClock()
                let observing = model.observe(text, clock: clock)
                await text.waitForSubscribers(2)
                _ = text.yield("a")
                _ = text.yield("ab")
                text.finish()
                for task in observing { await task.value }
                #expect(model.asyncAlgorithmsQueries == ["ab"])
                #expect(model.bridgesQueries == ["ab"])
            }
            #expect(released == nil)
        }
    }

}

/// The type of the clock a `some Clock<Duration>` parameter (an app's injected clock) was given.
func clockType(_ clock: some Clock<Duration>) -> ObjectIdentifier { ObjectIdentifier(type(of: clock)) }

@MainActor final class SearchModel {
    private(set) var asyncAlgorithmsQueries: [String] = []
    private(set) var bridgesQueries: [String] = []

    func observe(_ text: Broadcast<String>, clock: Clocks.TestClock<Duration>) -> [Task<Void, Never>] {
        [
            Task {
                for await query in text.stream().debounce(for: .milliseconds(300), clock: clock) {
                    asyncAlgorithmsQueries.append(query)
                }
            },
            Task {
                for await query in text.stream().debounce(for: .milliseconds(300), clock: clock, buffering: .latest) {
                    bridgesQueries.append(query)
                }
            },
        ]
    }
}
