import Bridges
import BridgesTesting
import Testing

/// A `@MainActor` view model with fire-and-forget `Task {}`s, tested with TestClock and
/// `runUntilIdle()` alone: no `waitForSleepers`, no yields. Its tasks run on the main actor;
/// `runUntilIdle` (and TestClock, which settles the same way) drains what they queue there.
@Suite(.timeLimit(.minutes(3))) struct MainActorQuiescenceTests {
    @MainActor final class SearchViewModel {
        private(set) var results: [String] = []
        private(set) var isSearching = false
        private var search: Task<Void, Never>?
        private let api: FakeCompletionAPI<String, [String]>
        private let clock: TestClock

        init(api: FakeCompletionAPI<String, [String]>, clock: TestClock) {
            self.api = api
            self.clock = clock
        }

        /// Debounced by 300 ms: typing again within the window restarts it.
        func textChanged(_ text: String) {
            search?.cancel()
            search = Task { [api, clock] in
                do { try await clock.sleep(for: .milliseconds(300)) } catch { return }
                isSearching = true
                defer { isSearching = false }
                do {
                    let found: [String] = try await withCallback { done in api.call(text, completion: done) }
                    results = found
                } catch {}
            }
        }

        func stop() { search?.cancel() }
    }

    @MainActor @Test func viewModel_onTheMainActor_debouncesWithoutWaitForSleepers() async throws {
        let api = FakeCompletionAPI<String, [String]>()
        let clock = TestClock()
        let leaks = LeakTracker()
        await withSerialTasks {
            let viewModel = SearchViewModel(api: api, clock: clock)
            leaks.track(viewModel)
            viewModel.textChanged("1")
            viewModel.textChanged("12")
            await clock.advance(by: .milliseconds(299))
            // the first timer was cancelled
            #expect(clock.pendingSleepers == [TestClock.Instant(offset: .milliseconds(300))])
            #expect(api.invocationCount == 0)
            await clock.advance(by: .milliseconds(1))
            #expect(api.invocations.map(\.request) == ["12"])
            #expect(viewModel.isSearching)
            api.complete(with: ["12 Main St"])
            await runUntilIdle()
            #expect(viewModel.results == ["12 Main St"])
            #expect(!viewModel.isSearching)
            await clock.expectNoPendingSleepers()
        }
        await leaks.expectAllReleased()
    }

    /// The same view model driven from a test that is not on the main actor.
    @Test func viewModel_fromANonisolatedTest_settlesTheMainActorToo() async throws {
        let api = FakeCompletionAPI<String, [String]>()
        let clock = TestClock()
        await withSerialTasks {
            let viewModel = await SearchViewModel(api: api, clock: clock)
            await viewModel.textChanged("123")
            await clock.advance(by: .milliseconds(300))
            #expect(api.invocations.map(\.request) == ["123"])
            api.complete(with: ["123 Main St"])
            await runUntilIdle()
            #expect(await viewModel.results == ["123 Main St"])
            await viewModel.stop()
            await clock.expectNoPendingSleepers()
        }
    }

    /// Main-actor work that hops back and forth between the main actor and a default actor.
    @MainActor @Test func runUntilIdle_followsHopsBetweenTheMainActorAndOtherActors() async {
        actor Store {
            var saved: [Int] = []
            func save(_ value: Int) { saved.append(value) }
        }
        @MainActor final class Model { var confirmed: [Int] = [] }
        let store = Store()
        let model = Model()
        await withSerialTasks {
            for value in 0..<5 {
                Task { @MainActor in
                    await store.save(value)
                    model.confirmed.append(value)
                    Task { @MainActor in model.confirmed.append(value + 100) }
                }
            }
            await runUntilIdle()
            #expect(model.confirmed.sorted() == [0, 1, 2, 3, 4, 100, 101, 102, 103, 104])
            #expect(await store.saved.sorted() == [0, 1, 2, 3, 4])
        }
    }

    /// A `@MainActor` object's `Task {}` that calls a nonisolated function, which yields: the
    /// task leaves the main actor, and each `Task.yield()` re-enqueues it on the executor it runs
    /// on. Those jobs are the scope's too, so `runUntilIdle` returns only once the task is done.
    /// (A thousand yields: if one went to the global pool unseen, the scope would look idle long
    /// before the task finished.)
    @Test func mainActorTask_callingNonisolatedCodeThatYields_isWaitedFor() async {
        @MainActor final class Loader {
            private(set) var loaded = false
            func load() {
                Task {
                    await Self.work()
                    loaded = true
                }
            }
            nonisolated static func work() async {
                for _ in 0..<1_000 { await Task.yield() }
            }
        }
        let leaks = LeakTracker()
        for _ in 0..<20 {
            await withSerialTasks {
                let loader = Loader()
                leaks.track(loader)
                await loader.load()
                await runUntilIdle()
                #expect(await loader.loaded)
            }
        }
        await leaks.expectAllReleased()
    }
}
