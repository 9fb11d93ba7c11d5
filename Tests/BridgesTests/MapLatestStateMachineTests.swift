import TestSupport
import Testing

@testable import Bridges

/// The decisions `mapLatest` takes under its lock, driven directly (no tasks, no timing).
@Suite("mapLatest: state machine", .timeLimit(.minutes(3)))
struct MapLatestStateMachineTests {
    typealias Machine = MapLatestStateMachine<Int, Never>

    /// A transform task that gets to run only after its element was superseded, or after the
    /// stream ended, does not call the transform at all: it would only have been cancelled once
    /// started (the case a consumer cancelled mid-stream hit: a transform started after the
    /// teardown, then cancelled).
    @Test func aTransformTask_startsOnlyWhileItsElementIsCurrentAndTheStreamLives() {
        var machine = Machine()
        let first = machine.elementArrived()!.generation
        #expect(machine.mayStart(generation: first))

        let second = machine.elementArrived()!.generation
        #expect(!machine.mayStart(generation: first), "superseded before its task ran")
        #expect(machine.mayStart(generation: second))

        let mustDeliver = machine.transformFinished(generation: second, .success(2))
        #expect(mustDeliver)
        #expect(!machine.mayStart(generation: second), "its transform already finished")

        let third = machine.elementArrived()!.generation
        _ = machine.terminate()
        #expect(!machine.mayStart(generation: third), "the stream ended before its task ran")
        let afterTeardown = machine.elementArrived()
        #expect(afterTeardown == nil, "nothing more starts after the teardown")
    }

    @Test func afterAnUpstreamFailure_nothingStarts() {
        var machine = Machine()
        let generation = machine.elementArrived()!.generation
        _ = machine.upstreamEnded(nil)
        #expect(machine.mayStart(generation: generation), "a normal end lets the last transform run")
        var failing = MapLatestStateMachine<Int, TestError>()
        let failed = failing.elementArrived()!.generation
        _ = failing.upstreamEnded(TestError(code: 1))
        #expect(!failing.mayStart(generation: failed), "a failure ends the stream at once")
    }
}
