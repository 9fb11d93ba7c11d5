import Bridges
import BridgesQuiescence
import BridgesTesting
import Dispatch
import TestSupport
import Testing

/// Code made on the line before `withSerialTasks` starts tasks the scope cannot track: a view
/// model whose `init` subscribes, created before the scope, runs its consumer beside the test.
/// The scope says so, once, at the test's line, every run, instead of letting the test pass or
/// fail by timing.
@Suite(.timeLimit(.minutes(3))) struct PreScopeWorkTests {
    /// A `@MainActor` view model that subscribes in `init` with a nonisolated consumer.
    @MainActor final class SubscribingViewModel {
        private(set) var value = 0
        let bag = CancellationBag()
        init(_ source: Broadcast<Int>) {
            source.stream().subscribe { [weak self] value in
                Task { @MainActor in self?.value = value }
            }.store(in: bag)
        }
    }

    /// A `@MainActor` view model whose `init` starts a task that leaves the main actor and
    /// starts work of its own there.
    @MainActor final class LoadingViewModel {
        private(set) var value = 0
        private var task: Task<Void, Never>?
        init(_ source: Broadcast<Int>) {
            task = Task { [weak self] in
                let value = await Self.first(of: source)
                self?.value = value
            }
        }
        func stop() { task?.cancel() }
        nonisolated static func first(of source: Broadcast<Int>) async -> Int {
            await Task {
                for await value in source.stream() { return value }
                return -1
            }.value
        }
    }

    /// Runs `body` in a scope on the caller's isolation (a `@MainActor` test's is a main-actor
    /// scope) and returns how many times the scope reported work made before it.
    static func preScopeReports(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async -> Void
    ) async -> Int {
        let reports = Counter()
        await withKnownIssue(isolation: isolation) {
            await withSerialTasks(isolation: isolation) {
                #expect(JobRouter.currentScope?.onMainQueue == (isolation === MainActor.shared))
                await body()
            }
        } matching: { issue in
            guard issue.comments.contains(where: { $0.rawValue.contains("was created before the scope opened") }) else {
                return false
            }
            reports.increment()
            return true
        }
        return reports.value
    }

    /// Once the view model's consumer has subscribed, sends it two elements on the caller's
    /// isolation, the scope idle before each. The scope sees its code resume the consumer waiting
    /// in `next()`. A consumer still on its way there takes the element without being resumed,
    /// which the scope cannot see (it reports what it saw): the second element, sent after the
    /// first was taken, finds it waiting.
    static func sendTwoElements(to source: Broadcast<Int>, isolation: isolated (any Actor)? = #isolation) async {
        await source.waitForSubscribers(1)
        await runUntilIdle()
        _ = source.yield(1)
        await runUntilIdle()
        _ = source.yield(2)
        await runUntilIdle()
    }

    @MainActor @Test func viewModelSubscribingBeforeTheScope_isReportedOnceEveryRun() async {
        let leaks = LeakTracker()
        for _ in 0..<20 {
            let source = Broadcast<Int>()
            let model = SubscribingViewModel(source)  // made on the line before the scope
            leaks.track(model)
            let reports = await Self.preScopeReports { await Self.sendTwoElements(to: source) }
            #expect(reports == 1)
        }
        await leaks.expectAllReleased()
    }

    @Test func viewModelSubscribingBeforeTheScope_fromANonisolatedTest_isReported() async {
        let leaks = LeakTracker()
        for _ in 0..<20 {
            let source = Broadcast<Int>()
            let model = await SubscribingViewModel(source)
            leaks.track(model)
            let reports = await Self.preScopeReports { await Self.sendTwoElements(to: source) }
            #expect(reports == 1)
        }
        await leaks.expectAllReleased()
    }

    /// The task never passes the scope's code (it is resumed on the main actor): it is known by
    /// leaving the main actor and starting a task of its own, as a task of this test.
    @MainActor @Test func mainActorTaskMadeBeforeTheScope_leavingTheMainActor_isReported() async {
        let leaks = LeakTracker()
        for _ in 0..<20 {
            let source = Broadcast<Int>()
            let model = LoadingViewModel(source)
            leaks.track(model)
            let reports = await Self.preScopeReports {
                await source.waitForSubscribers(1)
                _ = source.yield(1)
                await runUntilIdle()
            }
            #expect(reports == 1)
            model.stop()
        }
        await leaks.expectAllReleased()
    }

    /// The same view models made inside the scope: tracked, exact, nothing reported.
    @MainActor @Test func viewModelsMadeInsideTheScope_areTrackedAndNotReported() async {
        let leaks = LeakTracker()
        for _ in 0..<20 {
            await withSerialTasks {
                let source = Broadcast<Int>()
                let subscribing = SubscribingViewModel(source)
                let loading = LoadingViewModel(source)
                leaks.track(subscribing)
                leaks.track(loading)
                await source.waitForSubscribers(2)
                _ = source.yield(1)
                await runUntilIdle()
                #expect(subscribing.value == 1)
                #expect(loading.value == 1)
                loading.stop()
            }
        }
        await leaks.expectAllReleased()
    }

    /// A task of this test, made before its scope, that left the main actor and started work while
    /// only another test's scope was open (before its own scope existed), is still reported when
    /// it starts work inside its own scope: resumed from a Dispatch thread, not by the scope's code.
    @MainActor @Test func taskSeenBeforeItsScopeOpened_isReportedWhenItWorksInsideIt() async {
        let otherOpen = Gate()
        let releaseOther = Gate()
        let other = Task.detached {  // another test's scope, open throughout
            await withSerialTasks {
                otherOpen.open()
                await releaseOther.wait()
            }
        }
        await otherOpen.wait()
        let started = Counter()
        let kick = Gate()
        let task = Task { @MainActor in await Self.workOffTheMainActor(started: started, kick: kick) }
        await started.wait(untilAtLeast: 1)  // it left the main actor and started work: seen, no scope of its test open
        let reports = await Self.preScopeReports {
            DispatchQueue.global().async { kick.open() }
            await started.wait(untilAtLeast: 2)
            await task.value
            await runUntilIdle()
        }
        #expect(reports == 1)
        releaseOther.open()
        await other.value
    }

    /// A builder of the scope first runs the teardowns queued on its actor, any stream's (another
    /// test's too): what they resume, here a task made before the scope, is not this test's
    /// pre-scope work, and the scope reports nothing.
    @MainActor @Test func queuedTeardownRunByTheScopesBuilder_resumingATaskMadeBefore_isNotReported() async {
        let leaks = LeakTracker()
        let released = Gate()
        let waiter = Task.detached { await released.wait() }  // made before the scope
        let consumer = await Self.consumeAStream(tornDownBy: released, leaks: leaks)
        await withSerialTasks {
            await Task { @MainActor in
                consumer.cancel()  // its teardown is queued on the main actor, and this builder runs it first
                for await _ in CallbackStream<Int, Never>({ sink in
                    sink.finish()
                    return Cancellation()
                }) {}
            }.value
            await waiter.value
            await runUntilIdle()
        }
        await consumer.value
        await leaks.expectAllReleased()
    }

    /// A stream whose teardown, written on the main actor, opens `gate`, and a consumer off the
    /// main actor; returns once the consumer is inside `next()` (a rendezvous stream asks for an
    /// element there), so cancelling it ends the stream in its cancellation handler, which
    /// queues the teardown on the main actor.
    @MainActor static func consumeAStream(tornDownBy gate: Gate, leaks: LeakTracker) async -> Task<Void, Never> {
        final class Producer: Sendable {}
        let producer = Producer()
        leaks.track(producer)
        let waiting = Gate()
        let stream = CallbackStream<Int, Never>(buffering: .rendezvous) { sink in
            sink.onDemand { _ in waiting.open() }
            return Cancellation { [producer] in  // keeps the sink: a dropped sink ends the stream
                _ = (producer, sink)
                gate.open()
            }
        }
        let consumer = Task.detached {
            for await _ in stream {}
        }
        await waiting.wait()
        return consumer
    }

    nonisolated static func workOffTheMainActor(started: Counter, kick: Gate) async {
        await Task { _ = started.increment() }.value
        await kick.wait()
        await Task { _ = started.increment() }.value
    }

    /// The enqueue hook reads which test a task belongs to, once per task outside every scope, for
    /// the whole run: the thousandth read runs the reader as directly as the first (a function
    /// kept as a generic container's whole value gains two reabstraction thunks per read in a
    /// debug build, and a hook that never returns stops whatever queue it runs on).
    @Test func testReader_readAThousandTimes_runsAsDirectlyAsTheFirstTime() {
        let router = JobRouter()
        router.identifyTests {
            var local = 0
            return withUnsafeMutablePointer(to: &local) { String(UInt(bitPattern: $0)) }
        }
        let first = Self.stackAddressOfTheReader(router)
        for _ in 0..<1_000 { _ = router.testOfCurrentTask() }
        let later = Self.stackAddressOfTheReader(router)
        // The same call from the same frame: the same stack address, give or take a frame.
        let deeper = first.distance(to: later).magnitude
        #expect(deeper < 1_024, "the reader runs \(deeper) bytes deeper")
    }

    private static func stackAddressOfTheReader(_ router: JobRouter) -> Int {
        router.testOfCurrentTask().flatMap { Int($0) } ?? 0
    }
}
