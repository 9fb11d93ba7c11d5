import Bridges
import Testing

/// Every entry point that calls a user closure later, used from a `@MainActor` view model whose
/// closures set its state without `await`: each closure runs on the main actor (Swift 6 checks
/// main-actor closures at run time, so a call from elsewhere would trap), and the model is
/// released afterwards.
@Suite("Main-actor callers of every entry point", .timeLimit(.minutes(3)))
struct MainActorEntryPointsTests {
    @MainActor
    final class Screen {
        var title = ""
        var items: [Int] = []
        let bag = CancellationBag()
        let done = Signal()
        let deinitialized = Signal()

        deinit { deinitialized.open() }

        func loadWithCompletion() -> Cancellation {
            withCompletion(
                on: .mainActor,
                { (result: Result<Int, any Error>) in
                    MainActor.assertIsolated()
                    self.title = "loaded \((try? result.get()) ?? -1)"
                    self.done.open()
                }
            ) {
                MainActor.assertIsolated()
                self.title = "loading"
                return 7
            }
        }

        func subscribe(to items: CallbackStream<Int, Never>) -> Cancellation {
            items.subscribe(
                on: .mainActor,
                onElement: { item in
                    MainActor.assertIsolated()
                    self.items.append(item)
                },
                onFinish: { _ in
                    MainActor.assertIsolated()
                    self.done.open()
                })
        }

        func follow(_ items: CallbackStream<Int, Never>) {
            items.forEach(weak: self, in: bag) { owner, item in
                MainActor.assertIsolated()
                owner.items.append(item)
                if item == 3 { owner.done.open() }
            }
        }

        func refresh() {
            runTask(weak: self, in: bag) {
                MainActor.assertIsolated()
                return 42
            } then: { owner, result in
                MainActor.assertIsolated()
                owner.title = "refreshed \((try? result.get()) ?? -1)"
                owner.done.open()
            }
        }

        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
        func search(_ queries: CallbackStream<Int, Never>) {
            queries.collectLatest(weak: self, in: bag) { owner, query in
                MainActor.assertIsolated()
                owner.items.append(query)
                if query == 3 { owner.done.open() }
            }
        }

        func start() async throws -> Int {
            try await withCallback { (done: @escaping @Sendable (Result<Int, any Error>) -> Void) in
                MainActor.assertIsolated()  // the body runs in the caller's isolation
                self.title = "started"
                done(.success(1))
            }
        }
    }

    static func finite() -> CallbackStream<Int, Never> {
        CallbackStream { sink in
            for value in 1...3 { sink.yield(value) }
            sink.finish()
            return Cancellation()
        }
    }

    @MainActor @Test func withCompletion_onMainActor() async {
        var screen: Screen? = Screen()
        weak var released: AnyObject?
        released = screen
        let token = screen!.loadWithCompletion()
        await screen!.done.wait()
        #expect(screen?.title == "loaded 7")
        token.cancel()
        let deinitialized = screen!.deinitialized
        screen = nil
        await deinitialized.wait()  // the handler's task lets the owner go once it has run, maybe after this line
        #expect(released == nil)
    }

    @MainActor @Test func subscribe_onMainActor() async {
        var screen: Screen? = Screen()
        weak var released: AnyObject?
        released = screen
        let token = screen!.subscribe(to: Self.finite())
        await screen!.done.wait()
        #expect(screen?.items == [1, 2, 3])
        token.cancel()
        let deinitialized = screen!.deinitialized
        screen = nil
        await deinitialized.wait()  // the handler's task lets the owner go once it has run, maybe after this line
        #expect(released == nil)
    }

    @MainActor @Test func forEachWeak() async {
        var screen: Screen? = Screen()
        weak var released: AnyObject?
        released = screen
        screen!.follow(Self.finite())
        await screen!.done.wait()
        #expect(screen?.items == [1, 2, 3])
        let deinitialized = screen!.deinitialized
        screen = nil
        await deinitialized.wait()  // the handler's task lets the owner go once it has run, maybe after this line
        #expect(released == nil)
    }

    @MainActor @Test func runTaskWeak() async {
        var screen: Screen? = Screen()
        weak var released: AnyObject?
        released = screen
        screen!.refresh()
        await screen!.done.wait()
        #expect(screen?.title == "refreshed 42")
        let deinitialized = screen!.deinitialized
        screen = nil
        await deinitialized.wait()  // the handler's task lets the owner go once it has run, maybe after this line
        #expect(released == nil)
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    @MainActor @Test func collectLatestWeak() async {
        var screen: Screen? = Screen()
        weak var released: AnyObject?
        released = screen
        screen!.search(Self.finite())
        await screen!.done.wait()
        #expect(screen?.items.last == 3)
        let deinitialized = screen!.deinitialized
        screen = nil
        await deinitialized.wait()  // the last action's task lets the owner go as it ends, off the main actor
        #expect(released == nil)
    }

    @MainActor @Test func withCallback_bodyOnTheCallersActor() async throws {
        var screen: Screen? = Screen()
        weak var released: AnyObject?
        released = screen
        #expect(try await screen!.start() == 1)
        #expect(screen?.title == "started")
        let deinitialized = screen!.deinitialized
        screen = nil
        await deinitialized.wait()  // the handler's task lets the owner go once it has run, maybe after this line
        #expect(released == nil)
    }
}
