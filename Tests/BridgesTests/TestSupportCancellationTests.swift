import Bridges
import TestSupport
import Testing

/// A time limit cancels a test's task, and its waits return early: the test support it waits
/// through must then fail that one test, never trap and take the whole run (and the report of
/// every running test) down with it. Each test here cancels its own waiting task the way a
/// time limit does, before what it waits for has happened.
@Suite(.timeLimit(.minutes(3))) struct TestSupportCancellationTests {
    static func isCancelledWait(_ issue: Issue) -> Bool {
        issue.comments.contains { $0.rawValue.contains("the test was cancelled") }
    }

    @Test func sinkBox_waitCancelledBeforeTheBuilderRan_failsTheTest_andTheSinkEndsQuietly() async {
        let box = SinkBox<Int, Never>()
        await withKnownIssue {
            let producer = Task {
                await box.ready.wait()
                return box.sink.yield(1)
            }
            producer.cancel()
            #expect(await producer.value == .terminated)
        } matching: {
            Self.isCancelledWait($0)
        }
    }

    @Test func legacyAPI_storedReadAfterACancelledWait_failsTheTest_andCallsNothing() async {
        let api = LegacyAPI<@Sendable (Result<Int, Never>) -> Void>()
        await withKnownIssue {
            let caller = Task {
                await api.started.wait()
                api.stored(.success(1))
            }
            caller.cancel()
            await caller.value
        } matching: {
            $0.comments.contains { $0.rawValue.contains("read before any call started") }
        }
    }

    @Test func drivenUpstream_nextIterationCancelled_failsTheTest_andTheSinkEndsQuietly() async {
        let upstream = DrivenUpstream<Never>()
        await withKnownIssue {
            let producer = Task {
                let sink = await upstream.nextIteration()
                return sink.yield(1)
            }
            producer.cancel()
            #expect(await producer.value == .terminated)
        } matching: {
            Self.isCancelledWait($0)
        }
    }
}
