@testable import Bridges
import Dispatch
import Testing

/// `next()`'s cancellation check calls the concurrency runtime directly (`CBridgesRuntime`)
/// instead of `Task.isCancelled`, to skip a retain and release of the current task per element.
/// These tests hold it to `Task.isCancelled`'s answer wherever code can run, and hold the stream
/// to its promise: a cancelled consumer gets `nil` even with elements buffered, and those
/// elements are reported undelivered, not lost.
@Suite("CallbackStream: the runtime's cancellation check", .timeLimit(.minutes(3)))
struct CallbackStreamCancellationCheckTests {
    /// Both answers, read together in the calling context.
    static func answers() -> (runtime: Bool, task: Bool) { (_currentTaskIsCancelled, Task.isCancelled) }

    @Test func outsideAnyTask_bothSayNotCancelled() async {
        // A block on a dispatch queue runs on a worker thread with no current task.
        let (runtime, task) = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: Self.answers()) }
        }
        #expect(runtime == false)
        #expect(task == false)
    }

    @Test func aRunningTask_thenTheSameTaskCancelled() async {
        let answers = await Task {
            let before = Self.answers()
            withUnsafeCurrentTask { $0?.cancel() }
            return [before, Self.answers()]
        }.value
        #expect(answers.map(\.runtime) == [false, true])
        #expect(answers.map(\.task) == [false, true])
    }

    @Test func aTaskCancelledThroughItsHandle_whileItWaits() async {
        let started = Signal()
        let release = Signal()
        let task = Task.detached {
            started.open()
            await release.wait()  // not cancellable: the task sees its cancellation only by asking
            return Self.answers()
        }
        await started.wait()
        task.cancel()
        release.open()
        let (runtime, answer) = await task.value
        #expect(runtime == true)
        #expect(answer == true)
    }

    @Test func childTasksOfACancelledGroup_andOfACancelledParent() async {
        let group = await withTaskGroup(of: (runtime: Bool, task: Bool).self) { group in
            group.cancelAll()
            group.addTask { Self.answers() }  // added after cancelAll: starts cancelled
            return await group.next()!
        }
        #expect(group.runtime == true)
        #expect(group.task == true)

        let child = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            async let inner = Self.answers()  // a child inherits its parent's cancellation
            return await inner
        }.value
        #expect(child.runtime == true)
        #expect(child.task == true)
    }

    @Test @MainActor func onTheMainActor_inACancelledTask() async {
        let answers = await Task { @MainActor in
            withUnsafeCurrentTask { $0?.cancel() }
            return Self.answers()
        }.value
        #expect(answers.runtime == true)
        #expect(answers.task == true)
    }

    /// The check on the fast path: elements buffered, the consumer cancelled between two of them.
    @Test func consumerCancelledWithElementsBuffered_nextReturnsNil_andTheRestIsReportedUndelivered() async {
        let probe = StreamProbe()
        let undelivered = Collected<Int>()
        let reasons = Collected<UndeliveredReason>()
        let stream = CallbackStream<Int, Never>(onUndelivered: { element, reason in
            undelivered.append(element)
            reasons.append(reason)
        }) { sink in
            probe.builds.increment()
            let proxy = ProbeProxy(released: probe.proxyReleased)
            probe.proxy.object = proxy
            for value in 1...5 { sink.yield(value) }  // all buffered before the first element is taken
            sink.finish()
            return Cancellation {
                probe.teardowns.increment()
                _ = proxy
            }
        }
        let received = await Task {
            var received: [Int] = []
            var iterator = stream.makeAsyncIterator()
            while let value = await iterator.next() {
                received.append(value)
                if value == 2 { withUnsafeCurrentTask { $0?.cancel() } }
            }
            return received
        }.value
        #expect(received == [1, 2], "no element after the task was cancelled, although three were buffered")
        #expect(undelivered.values == [3, 4, 5])
        #expect(reasons.values == [.cancelled, .cancelled, .cancelled])
        await probe.proxyReleased.wait()
        #expect(probe.teardowns.value == 1)
        #expect(probe.proxy.object == nil)
    }

    /// The same for a consumer on the main actor, whose `next(isolation:)` is the inlined fast path
    /// with the main actor as its isolation.
    @Test @MainActor func mainActorConsumerCancelledWithElementsBuffered_getsNilNext() async {
        let probe = StreamProbe()
        let box = SinkBox<Int, Never>()
        let stream = CallbackStream<Int, Never>.probed(probe, box: box) { sink in
            for value in 1...3 { sink.yield(value) }
        }
        let received = await Task { @MainActor in
            var received: [Int] = []
            for await value in stream {
                received.append(value)
                withUnsafeCurrentTask { $0?.cancel() }
            }
            return received
        }.value
        #expect(received == [1])
        await probe.tornDown.wait()
        #expect(box.sink.yield(4) == .terminated)
        box.clear()
        await probe.proxyReleased.wait()
        #expect(probe.teardowns.value == 1)
    }
}
