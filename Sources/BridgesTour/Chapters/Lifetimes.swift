// swift-format-ignore-file
// (its snippet regions are MIGRATION.md's before/after blocks, line for line)
import Bridges
import Dispatch

// Chapter "lifetimes": the leak a naive `Task { for await … { self… } }` causes, and its fix;
// plus the way back to callbacks (withCompletion, subscribe) for code not yet migrated.

// MARK: - A facade whose state is an endless stream

/// A facade in the style of the bank's iOS team: `items` is state as a stream that never ends
/// while the app runs. Each consumer gets its own producer; its teardown is counted.
final class ShoppingFacade: Sendable {
    let teardowns = TourCounter()
    private let sinks = TourSinks()

    var items: CallbackStream<[String], Never> {
        CallbackStream(buffering: .latest) { [teardowns, sinks] sink in
            sinks.add(sink)
            _ = sink.yield(["milk", "eggs"])
            return Cancellation { teardowns.increment() }
        }
    }

    /// Ends every stream handed out so far (the app shutting down).
    func finishAll() { sinks.finishAll() }

    func load() async throws -> [String] { ["milk", "eggs", "bread"] }
}

// MARK: - The leak and its fix

/// The screen's view model as it is usually first written.
@MainActor
final class LeakyShoppingViewModel {
    var items: [String] = []
    private let alive: TourCounter

    init(facade: ShoppingFacade, alive: TourCounter, updated: TourCounter) {
        self.alive = alive
        alive.increment()
        // snippet:begin weakOwner.before
        Task { for await items in facade.items { self.items = items; updated.increment() } }
        // snippet:end weakOwner.before
    }

    deinit { alive.decrement() }
}

/// The same view model with a weak-owner task.
@MainActor
final class ShoppingViewModel {
    var items: [String] = []
    let bag = CancellationBag()
    private let alive: TourCounter

    init(facade: ShoppingFacade, alive: TourCounter, updated: TourCounter) {
        self.alive = alive
        alive.increment()
        // snippet:begin weakOwner.after
        facade.items.forEach(weak: self, in: bag) { owner, items in owner.items = items; updated.increment() }
        // snippet:end weakOwner.after
    }

    deinit { alive.decrement() }
}

/// A view model that shows a source's failure: `forEach(weak:) … onFailure:` tells it once,
/// after the last element, on the main actor.
@MainActor
final class BasketViewModel {
    var items: [String] = []
    var failure: String?
    let bag = CancellationBag()
    private let alive: TourCounter

    init(basket: CallbackStream<[String], any Error>, alive: TourCounter, told: TourCounter) {
        self.alive = alive
        alive.increment()
        basket.forEach(weak: self, in: bag) { owner, items in
            owner.items = items
        } onFailure: { owner, error in
            owner.failure = "\(error)"
            told.increment()
        }
    }

    deinit { alive.decrement() }
}

struct BasketServiceDown: Error, CustomStringConvertible {
    var description: String { "the basket service is down" }
}

/// A screen over a basket that yields one list and fails: what its view model showed, then the
/// screen closes and its view model goes.
@MainActor
func showFailingBasket(alive: TourCounter) async -> (items: [String], failure: String?) {
    let told = TourCounter()
    let basket = CallbackStream<[String], any Error>(buffering: .unbounded) { sink in
        _ = sink.yield(["milk", "eggs"])
        sink.finish(throwing: BasketServiceDown())
        return Cancellation {}
    }
    var screen: BasketViewModel? = BasketViewModel(basket: basket, alive: alive, told: told)
    await told.wait(until: 1)
    let shown = (screen?.items ?? [], screen?.failure)
    screen = nil
    return shown
}

/// Opens and closes `count` screens, each with its own view model; returns how many view
/// models are still alive once every screen is closed.
@MainActor
func openAndCloseScreens(_ count: Int, leaky: Bool, facade: ShoppingFacade, alive: TourCounter) async -> Int {
    for _ in 0..<count {
        let updated = TourCounter()
        var screen: AnyObject? = leaky
            ? LeakyShoppingViewModel(facade: facade, alive: alive, updated: updated)
            : ShoppingViewModel(facade: facade, alive: alive, updated: updated)
        await updated.wait(until: 1)  // the screen showed its items
        _ = screen
        screen = nil  // the screen closes: its view model should go now
    }
    return alive.value
}

// MARK: - Back to callbacks

/// An async service that keeps its old completion-handler API, written by hand.
final class HandWrittenShoppingService: Sendable {
    let facade: ShoppingFacade
    init(facade: ShoppingFacade) { self.facade = facade }

    // snippet:begin withCompletion.before
    func load(completion: @escaping @Sendable (Result<[String], any Error>) -> Void) {
        Task {
            do {
                let items = try await facade.load()
                DispatchQueue.main.async { completion(.success(items)) }
            } catch {
                DispatchQueue.main.async { completion(.failure(error)) }
            }
        }
    }
    // snippet:end withCompletion.before
}

/// The same, on top of `withCompletion`: cancellable, exactly once, delivery stated.
final class ShoppingService: Sendable {
    let facade: ShoppingFacade
    init(facade: ShoppingFacade) { self.facade = facade }

    // snippet:begin withCompletion.after
    @discardableResult
    func load(completion: @escaping @Sendable (Result<[String], any Error>) -> Void) -> Cancellation {
        withCompletion(on: .mainActor, completion) { try await self.facade.load() }
    }
    // snippet:end withCompletion.after

    /// A slow request, to show cancellation.
    @discardableResult
    func loadSlowly(completion: @escaping @Sendable (Result<[String], any Error>) -> Void) -> Cancellation {
        withCompletion(on: .mainActor, completion) {
            try await Task.sleep(nanoseconds: 60_000_000_000)  // cancelled long before
            return []
        }
    }
}

/// A Combine-shaped legacy feed (`sink` returns a token you `store(in:)`): the shape of the
/// code `subscribe` replaces, written out so the "before" compiles on Linux without Combine.
final class LegacyPriceFeed: Sendable {
    final class Subscription: Hashable, Sendable {
        let cancel: @Sendable () -> Void
        init(cancel: @escaping @Sendable () -> Void) { self.cancel = cancel }
        static func == (lhs: Subscription, rhs: Subscription) -> Bool { lhs === rhs }
        func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
        func store(in set: inout Set<Subscription>) { set.insert(self) }
    }

    func sink(receiveValue: @escaping @Sendable (Int) -> Void) -> Subscription {
        for price in [101, 102, 103] { receiveValue(price) }
        return Subscription(cancel: {})
    }

    /// The migrated feed: an AsyncSequence.
    var prices: CallbackStream<Int, Never> {
        CallbackStream { sink in
            for price in [101, 102, 103] { _ = sink.yield(price) }
            sink.finish()
            return Cancellation {}
        }
    }
}

// MARK: - The chapter

@available(BridgesClock, *)  // the tour measures with Clock and Duration
var lifetimesChapter: Chapter { Chapter(name: "lifetimes", title: "Tasks that outlive their owner, and back to callbacks") {
    block(.legacy, "Task { for await … { self… } }, a hand-written completion API, sink + store(in:)")
    // 1. The leak: seven screens, seven view models still alive.
    let leakyFacade = ShoppingFacade()
    let leakyAlive = TourCounter()
    let leaked = await openAndCloseScreens(7, leaky: true, facade: leakyFacade, alive: leakyAlive)
    sayFigure("a naive Task { for await … { self.items = … } } kept \(leaked) of 7 view models alive after their screens closed", chapter: "lifetimes")
    try check(leaked == 7, "expected the naive version to keep all 7 view models alive, got \(leaked)")
    try check(leakyFacade.teardowns.value == 0, "the naive loops should still be running")
    leakyFacade.finishAll()  // only the end of the streams frees them
    await leakyAlive.wait(until: 0)
    say("  …and they are freed only when the streams end: \(leakyAlive.value) alive after finishAll()")

    // 2. A completion API written by hand over the async one: nothing to cancel it with.
    let facade = ShoppingFacade()
    let handWritten = TourSignal()
    HandWrittenShoppingService(facade: facade).load { result in
        print("completion: \(result)")
        handWritten.open()
    }
    await handWritten.wait()
    say("the hand-written load(completion:) returns nothing: a caller that goes away cannot cancel it")

    // 3. sink + store(in:) on a callback feed.
    let feed = LegacyPriceFeed()
    let seen = TourValues<Int>()
    var cancellables = Set<LegacyPriceFeed.Subscription>()
    // snippet:begin subscribe.before
    feed.sink { price in seen.append(price) }.store(in: &cancellables)
    // snippet:end subscribe.before
    say("sink delivered \(seen.values)")

    block(.bridge, "forEach(weak:in:) (and onFailure:), withCompletion, subscribe")
    // 1. The fix: forEach(weak:in:) lets each view model go with its screen.
    let alive = TourCounter()
    let kept = await openAndCloseScreens(7, leaky: false, facade: facade, alive: alive)
    await facade.teardowns.wait(until: 7)  // each owner's bag cancelled its loop: the source stopped
    sayFigure("forEach(weak: self, in: bag) kept \(kept) of 7 view models alive; \(facade.teardowns.value) stream teardowns ran", chapter: "lifetimes")
    try check(kept == 0, "forEach(weak:in:) must release every view model, \(kept) still alive")

    // A source that fails: `onFailure:` tells the owner, once, after its last element.
    let basketAlive = TourCounter()
    let basket = await showFailingBasket(alive: basketAlive)
    say("forEach(weak:) … onFailure: showed \(basket.items), then \"\(basket.failure ?? "no failure")\"")
    try check(basket.items == ["milk", "eggs"] && basket.failure == "\(BasketServiceDown())",
              "onFailure: must follow the last element with the failure, got \(basket)")
    await basketAlive.wait(until: 0)  // the screen closed: its view model went

    // 2. Back to callbacks: the old load(completion:) on top of the new async load().
    let service = ShoppingService(facade: facade)
    let loaded = TourCounter()
    let results = TourValues<String>()
    service.load { result in
        results.append("\(result.map { $0.joined(separator: ", ") })")
        loaded.increment()
    }
    let request = service.loadSlowly { result in
        results.append("slow request, cancelled: \((try? result.get()) == nil ? "CancellationError" : "value")")
        loaded.increment()
    }
    request.cancel()
    await loaded.wait(until: 2)
    for line in results.values.sorted() { say("withCompletion → \(line)") }
    try check(results.values.contains("slow request, cancelled: CancellationError"), "a cancelled request completes with CancellationError")

    // 3. sink + store(in:) → subscribe + store(in: bag)
    let bag = CancellationBag()
    let finished = TourCounter()
    // snippet:begin subscribe.after
    feed.prices.subscribe(on: .mainActor) { price in seen.append(price) }.store(in: bag)
    // snippet:end subscribe.after
    feed.prices.subscribe(onElement: { _ in }, onFinish: { _ in finished.increment() }).store(in: bag)
    await seen.wait(count: 6)
    say("subscribe delivered \(Array(seen.values.suffix(3))), on the main actor; the bag cancels it with its owner")
    try check(seen.values == [101, 102, 103, 101, 102, 103], "subscribe must deliver every price in order")
    bag.cancelAll()
    _ = cancellables
} }

// MARK: - Small thread-safe helpers for this chapter

/// A counter that chapters can await (`wait(until:)`) instead of sleeping.
final class TourCounter: @unchecked Sendable {  // every access goes through `lock`
    private let lock = DispatchSemaphore(value: 1)
    private var count = 0
    private var waiters: [(Int, CheckedContinuation<Void, Never>)] = []

    func increment() { change(by: 1) }
    func decrement() { change(by: -1) }

    var value: Int { lock.wait(); defer { lock.signal() }; return count }

    private func change(by delta: Int) {
        lock.wait()
        count += delta
        let ready = waiters.filter { $0.0 == count }.map(\.1)
        waiters.removeAll { $0.0 == count }
        lock.signal()
        for waiter in ready { waiter.resume() }
    }

    /// Returns once the count equals `target`.
    func wait(until target: Int) async {
        await withCheckedContinuation { continuation in
            lock.wait()
            if count == target {
                lock.signal()
                continuation.resume()
            } else {
                waiters.append((target, continuation))
                lock.signal()
            }
        }
    }
}

/// Values collected from any thread, awaitable by count.
final class TourValues<Value: Sendable>: @unchecked Sendable {  // every access goes through `lock`
    private let lock = DispatchSemaphore(value: 1)
    private var items: [Value] = []
    private let counter = TourCounter()

    func append(_ value: Value) {
        lock.wait()
        items.append(value)
        lock.signal()
        counter.increment()
    }

    var values: [Value] { lock.wait(); defer { lock.signal() }; return items }
    func wait(count: Int) async { await counter.wait(until: count) }
}

/// The sinks a facade handed out, so the chapter can end their streams.
final class TourSinks: Sendable {
    private let sinks = LockedBox<[CallbackStream<[String], Never>.Sink]>([])
    private let lock = DispatchSemaphore(value: 1)
    func add(_ sink: CallbackStream<[String], Never>.Sink) {
        lock.wait()  // makes the read-modify-write of the box one step
        sinks.value = sinks.value + [sink]
        lock.signal()
    }
    func finishAll() { for sink in sinks.value { sink.finish() } }
}
