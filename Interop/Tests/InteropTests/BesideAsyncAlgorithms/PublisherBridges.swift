// Publishers into async sequences, the `.values` way (Combine's, OpenCombine's) and Bridges' way
// (`stream(buffering:)`), each followed by swift-async-algorithms' operators and Bridges' ones,
// and the `value` spellings of Combine and BridgesCombine, in the same contexts as
// EveryOperator.swift. A compile check like it: an ambiguity or a crash fails the build.
//
// `.values` gives a sequence that is not `Sendable` under OpenCombine, so only the operators that
// do not need one follow it (`debounce`, `share` and `buffer` need a `Sendable` base).

import AsyncAlgorithms
import Bridges
import BridgesCombine

#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

func publishers_inAnAsyncFunction(_ inputs: Inputs) async throws {
    let subject = PassthroughSubject<Int, Never>()
    for await element in subject.values.removeDuplicates() { use(element) }
    for await element in subject.values.chunks(ofCount: 2) { use(element) }
    for await element in subject.values.adjacentPairs() { use(element) }
    for await element in subject.values.reductions({ $0 + $1 }) { use(element) }
    for await element in subject.values.interspersed(with: 0) { use(element) }
    for await element in subject.stream(buffering: .latest) { use(element) }
    for await element in subject.stream(buffering: .latest).debounce(for: .seconds(1), clock: inputs.clock) {
        use(element)
    }
    for await element in subject.stream(buffering: .latest).debounce(
        for: .seconds(1), clock: inputs.clock, buffering: .latest)
    {
        use(element)
    }
    for await element in subject.stream(buffering: .rendezvous).removeDuplicates() { use(element) }
    for await element in subject.stream(buffering: .rendezvous).share() { use(element) }
    for await element in subject.stream(buffering: .suspending(2)).buffer(policy: .bounded(2)) { use(element) }
    for await element in merge(subject.stream(buffering: .unbounded), inputs.stream) { use(element) }
    for await element in subject.uncheckedStream(buffering: .latest).removeDuplicates() { use(element) }
    for await element in subject.stream(buffering: .latest).mapLatest({ $0 }) { use(element) }
    for await element in subject.stream(buffering: .latest).shared() { use(element) }
    _ = subject.stream(buffering: .latest).debounce(for: .seconds(1), clock: inputs.clock).publisher()
    _ = inputs.stream.removeDuplicates().publisher()

    // `value`: a `Future`'s and a `CurrentValueSubject`'s own members are Combine's (no `try`:
    // Combine's, not BridgesCombine's throwing `Publisher.value`); on other publishers it is Bridges'.
    let future = Future<Int, Never> { $0(.success(1)) }
    let fromFuture: Int = await future.value
    let current = CurrentValueSubject<Int, Never>(1)
    let fromSubject: Int = current.value
    let first: Int? = try await current.firstValue
    let fromAsyncFuture: Int = try await AsyncFuture { 1 }.value
    let fromJust: Int = try await Just(1).value
    use((fromFuture, fromSubject, first, fromAsyncFuture, fromJust))
}

func publishers_inATask(_ inputs: Inputs) {
    Task {
        let subject = PassthroughSubject<Int, Never>()
        for await element in subject.values.removeDuplicates() { use(element) }
        for await element in subject.values.chunks(ofCount: 2) { use(element) }
        for await element in subject.stream(buffering: .latest).debounce(for: .seconds(1), clock: inputs.clock) {
            use(element)
        }
        for await element in subject.stream(buffering: .latest).debounce(
            for: .seconds(1), clock: ContinuousClock(), buffering: .latest)
        {
            use(element)
        }
        for await element in subject.stream(buffering: .rendezvous).share() { use(element) }
        for await element in merge(subject.stream(buffering: .unbounded), inputs.stream) { use(element) }
        for await element in subject.stream(buffering: .latest).mapLatest({ $0 }) { use(element) }
        let future = Future<Int, Never> { $0(.success(1)) }
        let fromFuture: Int = await future.value
        let current = CurrentValueSubject<Int, Never>(1)
        let fromSubject: Int = current.value
        use((fromFuture, fromSubject))
    }
    Task {
        let current = CurrentValueSubject<Int, Never>(1)
        let first: Int? = try await current.firstValue
        let fromAsyncFuture: Int = try await AsyncFuture { 1 }.value
        let failing = Future<Int, Boom> { $0(.failure(Boom())) }
        let fromFailing: Int = try await failing.value
        for try await element in failing.stream(buffering: .latest).removeDuplicates() { use(element) }
        for try await element in failing.values.removeDuplicates() { use(element) }
        use((first, fromAsyncFuture, fromFailing))
    }
}

func publishers_inAResultBuilder(_ inputs: Inputs) -> [Any] {
    let subject = PassthroughSubject<Int, Never>()
    return built {
        subject.values.removeDuplicates()
        subject.values.chunks(ofCount: 2)
        subject.stream(buffering: .latest).debounce(for: .seconds(1), clock: inputs.clock)
        subject.stream(buffering: .latest).debounce(for: .seconds(1), clock: inputs.clock, buffering: .latest)
        subject.stream(buffering: .rendezvous).share()
        subject.stream(buffering: .latest).mapLatest { $0 }
        subject.stream(buffering: .latest).debounce(for: .seconds(1), clock: inputs.clock).publisher()
    }
}

func publishers_inAnAutoclosure(_ inputs: Inputs) {
    let subject = PassthroughSubject<Int, Never>()
    _ = later(subject.values.removeDuplicates())
    _ = later(subject.stream(buffering: .latest).debounce(for: .seconds(1), clock: inputs.clock))
    _ = later(subject.stream(buffering: .latest).debounce(for: .seconds(1), clock: inputs.clock, buffering: .latest))
    _ = later(subject.stream(buffering: .rendezvous).share())
    _ = later(subject.stream(buffering: .latest).mapLatest { $0 })
    _ = later(CurrentValueSubject<Int, Never>(1).value)
}
