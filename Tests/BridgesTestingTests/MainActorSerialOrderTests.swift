import Bridges
import BridgesTesting
import Dispatch
import TestSupport
import Testing

/// A `@MainActor` test of a `@MainActor` view model, written as an iOS team writes it: the test
/// body's main-actor jobs take turns with the scope's tasks, so a `Recorder` (which consumes on a
/// task of its own) runs only where the body suspends, never between two of its synchronous calls.
@MainActor @Suite(.timeLimit(.minutes(3))) struct MainActorSerialOrderTests {
    @MainActor final class CounterViewModel {
        private(set) var count = 0
        let counts = Broadcast<Int>()
        func increment() {
            count += 1
            _ = counts.yield(count)
        }
    }

    /// Three synchronous calls, then a look. The recorder waits in `next()`: the first value
    /// goes straight to it, the second waits in its `.latest` buffer and the third replaces it,
    /// because the recorder cannot run between the calls: it records `[1, 3]`, every time. (A
    /// recorder running beside the body on another thread takes a value between the calls now
    /// and then, and records `[1, 2, 3]` or sees a value before the body looks.)
    @Test func recorder_doesNotRunBetweenSynchronousCallsOfAMainActorBody() async throws {
        for _ in 0..<50 {
            try await withSerialTasks {
                let model = CounterViewModel()
                let recorder = model.counts.stream(buffering: .latest).record()
                await model.counts.waitForSubscribers(1)
                model.increment()
                #expect(recorder.elements.isEmpty)
                model.increment()
                model.increment()
                #expect(recorder.elements.isEmpty)
                let first = try await recorder.next()
                let second = try await recorder.next()
                #expect([first, second] == [1, 3])
                await recorder.expectNoMoreElements()
                recorder.cancel()
                await recorder.waitForEnd()
            }
        }
    }

    /// The same without a wait for the subscriber: the recorder's task has not run at all when
    /// the body makes its calls, so it subscribes after them and sees nothing (a `Broadcast`
    /// without replay); it runs at the body's first suspension point.
    @Test func recorder_startsAtTheBodysFirstSuspensionPoint() async throws {
        for _ in 0..<50 {
            try await withSerialTasks {
                let model = CounterViewModel()
                let recorder = model.counts.stream(buffering: .unbounded).record()
                model.increment()
                #expect(model.counts.subscriberCount == 0)
                await runUntilIdle()
                #expect(model.counts.subscriberCount == 1)
                model.increment()
                let first = try await recorder.next()
                #expect(first == 2)
                await recorder.expectNoMoreElements()
                recorder.cancel()
                await recorder.waitForEnd()
            }
        }
    }

    /// The body blocks the main thread until a tracked task signals: in a scope on the main
    /// queue that task can never run. After the bound the scope says so and stops serialising,
    /// so the task runs on the global executor and the test ends, failed, instead of hanging.
    @Test func mainActorBody_blockingOnATrackedTask_failsAndReleasesTheScope() async {
        let semaphore = DispatchSemaphore(value: 0)
        let reported = Collected<String>()
        await withKnownIssue {
            await withSerialTasks(timeout: .seconds(1)) {
                let signaller = Task.detached { _ = semaphore.signal() }
                blockThread(until: semaphore)
                await signaller.value
            }
        } matching: { issue in
            for comment in issue.comments { reported.append(comment.rawValue) }
            return issue.comments.contains { $0.rawValue.contains("withSerialTasks:") }
        }
        #expect(reported.values.contains { $0.contains("waited") && $0.contains("no longer serialises") })
    }

    /// A tracked task that keeps itself runnable (polling with `Task.yield()`) takes turns with
    /// the body: each main-actor job waits behind one turn of the scope at most (256 jobs), so
    /// four trips through the main actor see a few turns of polls, never the whole poll. (A
    /// scope that posted a turn per job would put hundreds of turns ahead of each later
    /// main-actor job, and the poller would finish before the body's second trip.)
    @Test func pollingTask_takesTurnsWithTheBody_neitherStarvesTheOther() async {
        let limit = 100_000
        await withSerialTasks {
            let polls = Counter()
            let poller = Task.detached {  // nonisolated, so its polls are the scope's jobs
                while !Task.isCancelled, polls.value < limit {
                    polls.increment()
                    await Task.yield()
                }
            }
            var seen: [Int] = []
            for _ in 0..<4 {
                await Task { @MainActor in }.value  // a trip through the main actor: two of its jobs
                seen.append(polls.value)
            }
            poller.cancel()
            await poller.value
            #expect(seen.count == 4)
            #expect(seen.last ?? limit <= 4 * 2 * 256 + 256, "polls seen by each trip: \(seen)")
        }
    }
}
