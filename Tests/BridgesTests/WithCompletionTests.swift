import Dispatch
import TestSupport
import Testing

@testable import Bridges

@Suite("withCompletion", .timeLimit(.minutes(2)))
struct WithCompletionTests {
    // MARK: - Outcomes

    @Test func finish_withValue_callsCompletionOnceWithValue() async {
        let calls = Collected<CompletionOutcome>()
        let workEnded = Gate()
        withCompletion({ calls.append(CompletionOutcome($0)) }) { [end = DeinitSignal(workEnded)] in
            _ = end
            return 42
        }
        await calls.wait(count: 1)
        await workEnded.wait()  // the Task ended: any second call would have happened by now
        #expect(calls.values == [.value(42)])
    }

    @Test func finish_withError_callsCompletionOnceWithError() async {
        let calls = Collected<CompletionOutcome>()
        let workEnded = Gate()
        withCompletion({ (result: Result<Int, any Error>) in calls.append(CompletionOutcome(result)) }) {
            [end = DeinitSignal(workEnded)] in
            _ = end
            throw TestError(code: 7)
        }
        await calls.wait(count: 1)
        await workEnded.wait()
        #expect(calls.values == [.failure(7)])
    }

    @Test func cancel_whileWorkSuspended_completesAtOnceWithCancellationError_andCancelsTheTask() async {
        let calls = Collected<CompletionOutcome>()
        let workCancelled = Gate()
        let source = TrackedStream(Int.self)
        let workEnded = Gate()
        let token = withCompletion({ calls.append(CompletionOutcome($0)) }) { [end = DeinitSignal(workEnded), source] in
            _ = end
            // Waits for an element that never comes; ends only through cancellation.
            return await withTaskCancellationHandler {
                var iterator = source.stream.makeAsyncIterator()
                return await iterator.next() ?? -1
            } onCancel: {
                workCancelled.open()
            }
        }
        token.cancel()
        // Delivered synchronously by cancel() with `.current`: no wait needed.
        #expect(calls.values == [.cancelled])
        await workCancelled.wait()
        await source.tornDown.wait()
        await workEnded.wait()
        #expect(calls.values == [.cancelled], "the work's late result (-1) must be discarded")
        #expect(token.isCancelled)
    }

    @Test func cancel_afterFinish_doesNothing() async {
        let calls = Collected<CompletionOutcome>()
        let workEnded = Gate()
        let token = withCompletion({ calls.append(CompletionOutcome($0)) }) { [end = DeinitSignal(workEnded)] in
            _ = end
            return 1
        }
        await calls.wait(count: 1)
        await workEnded.wait()
        token.cancel()
        token.cancel()
        #expect(calls.values == [.value(1)])
    }

    @Test func cancel_withDoNotCall_neverCallsAndReleasesTheCompletion() async {
        let calls = Collected<CompletionOutcome>()
        let finish = Gate()
        let workEnded = Gate()
        let capturedReleased = Gate()
        let token = withCompletion(
            whenCancelled: .doNotCall,
            { [captured = DeinitSignal(capturedReleased)] result in
                _ = captured
                calls.append(CompletionOutcome(result))
            }
        ) { [end = DeinitSignal(workEnded)] in
            _ = end
            await finish.wait()  // ignores cancellation: finishes with a value after cancel
            return 5
        }
        token.cancel()
        await capturedReleased.wait()  // the completion (and what it captured) is released by cancel()
        finish.open()
        await workEnded.wait()
        #expect(calls.values.isEmpty)
    }

    // MARK: - Shapes

    @Test func optionalPairShape_passesExactlyOneNonNil() async {
        let values = Collected<String>()
        withCompletion({ (value: Int?, error: (any Error)?) in
            values.append("\(value.map(String.init) ?? "nil"),\(error.map { "\($0)" } ?? "nil")")
        }) { 3 }
        await values.wait(count: 1)
        withCompletion({ (value: Int?, error: (any Error)?) in
            values.append("\(value.map(String.init) ?? "nil"),\(error is TestError)")
        }) { () async throws -> Int in throw TestError(code: 1) }
        await values.wait(count: 2)
        let token = withCompletion({ (value: Int?, error: (any Error)?) in
            values.append("\(value.map(String.init) ?? "nil"),\(error is CancellationError)")
        }) { () async throws -> Int in
            try await suspendUntilCancelled()
            return 0
        }
        token.cancel()
        await values.wait(count: 3)
        #expect(values.values == ["3,nil", "nil,true", "nil,true"])
    }

    @Test func errorOnlyShape_nilOnSuccess() async {
        let errors = Collected<String>()
        withCompletion({ (error: (any Error)?) in errors.append(error.map { "\($0)" } ?? "nil") }) { () async throws in
        }
        await errors.wait(count: 1)
        withCompletion({ (error: (any Error)?) in errors.append("\(error is TestError)") }) { () async throws in
            throw TestError(code: 2)
        }
        await errors.wait(count: 2)
        #expect(errors.values == ["nil", "true"])
    }

    // MARK: - Delivery

    @Test func delivery_onQueue_callsOnThatQueue_forValueAndCancellation() async {
        let key = DispatchSpecificKey<Int>()
        let queue = DispatchQueue(label: "completion-queue")
        queue.setSpecific(key: key, value: 99)
        let onQueue = Collected<Bool>()
        withCompletion(
            on: .queue(queue),
            { (_: Result<Int, any Error>) in
                onQueue.append(DispatchQueue.getSpecific(key: key) == 99)
            }
        ) { 1 }
        let token = withCompletion(
            on: .queue(queue),
            { (_: Result<Int, any Error>) in
                onQueue.append(DispatchQueue.getSpecific(key: key) == 99)
            }
        ) {
            try await suspendUntilCancelled()
            return 2
        }
        token.cancel()  // called here, off the queue: the CancellationError still goes to the queue
        await onQueue.wait(count: 2)
        #expect(onQueue.values == [true, true])
    }

    @Test func delivery_onMainActor_callsOnTheMainActor() async {
        let onMain = Collected<Bool>()
        withCompletion(on: .mainActor, { (_: Result<Int, any Error>) in onMain.append(isOnMainActor()) }) { 1 }
        let token = withCompletion(on: .mainActor, { (_: Result<Int, any Error>) in onMain.append(isOnMainActor()) }) {
            try await suspendUntilCancelled()
            return 2
        }
        token.cancel()
        await onMain.wait(count: 2)
        #expect(onMain.values == [true, true])
    }

    @MainActor
    @Test func operation_writtenOnMainActor_runsOnMainActor() async {
        let model = MainActorLoader()
        let result = Collected<CompletionOutcome>()
        model.load { result.append(CompletionOutcome($0)) }
        await result.wait(count: 1)
        #expect(result.values == [.value(1)])
        #expect(model.loads == 1)
    }

    // MARK: - Race

    /// 10 000 times: the work finishes on a pool thread while another thread cancels. Exactly one
    /// call per iteration, with the value or CancellationError, never both and never neither.
    @Test func race_finishVersusCancel_10_000_iterations_completesExactlyOnce() async {
        let iterations = 10_000
        let calls = LockedState<[[CompletionOutcome]]>(Array(repeating: [], count: iterations))
        let delivered = Collected<Int>()
        let tasksEnded = Collected<Int>()
        let cancelsDone = Collected<Int>()

        final class EndSignal: Sendable {
            let index: Int
            let ended: Collected<Int>
            init(_ index: Int, _ ended: Collected<Int>) {
                self.index = index
                self.ended = ended
            }
            deinit { ended.append(index) }
        }

        for index in 0..<iterations {
            let end = EndSignal(index, tasksEnded)
            let tokenReady = Collected<Cancellation>()
            let token = withCompletion({ result in
                calls.withLock { $0[index].append(CompletionOutcome(result)) }
                delivered.append(index)
            }) { [end] in
                _ = end
                // Start the canceller from inside the work, so that it runs on another thread
                // exactly while this Task returns and completes: a real race, both ways.
                await tokenReady.wait(count: 1)
                let token = tokenReady.values[0]
                DispatchQueue.global().async {
                    token.cancel()
                    cancelsDone.append(index)
                }
                // Sweep the race window: a little work of varying length (not a wait) before
                // returning, so both orders happen many times.
                return index + raceJitter(index % 200) * 0
            }
            tokenReady.append(token)
        }
        // Every work Task has ended (its closure was released) and every cancel() has returned:
        // any second call would have been made by now.
        await tasksEnded.wait(count: iterations)
        await cancelsDone.wait(count: iterations)
        await delivered.wait(count: iterations)

        let all = calls.withLock { $0 }
        let wrongCount = all.indices.filter { all[$0].count != 1 }
        #expect(wrongCount.isEmpty, "iterations without exactly one call: \(wrongCount.prefix(10))")
        let unexpected = all.indices.filter { index in
            all[index].contains { $0 != .value(index) && $0 != .cancelled }
        }
        #expect(unexpected.isEmpty, "unexpected outcomes: \(unexpected.prefix(10).map { all[$0] })")
        #expect(delivered.count == iterations)
        let cancelled = all.filter { $0 == [.cancelled] }.count
        print("withCompletion race: \(iterations - cancelled) finished first, \(cancelled) cancelled first")
    }
}

/// A `@MainActor` type keeping its old completion-handler API on top of the new async one.
@MainActor
final class MainActorLoader {
    var loads = 0

    func load() async throws -> Int {
        MainActor.assertIsolated()
        loads += 1
        return loads
    }

    @discardableResult
    func load(completion: @escaping @Sendable (Result<Int, any Error>) -> Void) -> Cancellation {
        withCompletion(on: .mainActor, completion) {
            MainActor.assertIsolated()  // the operation inherits the main actor, like Task { }
            return try await self.load()
        }
    }
}
