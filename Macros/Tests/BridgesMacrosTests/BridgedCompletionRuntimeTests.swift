#if Macros
import BridgesMacros
import BridgesTesting
import LegacyFixtures
import Testing

/// An async API with completion-handler forms for callers not migrated yet.
final class Repository: Sendable {
    let api = FakeCompletionAPI<Int, String>()

    @BridgedCompletion
    func load(id: Int) async throws -> String {
        try await withCallback { done in api.call(id, completion: done) }
    }

    @BridgedCompletion(on: .mainActor)
    func refresh() async throws {
        _ = try await load(id: 0)
    }
}

/// What a completion handler received, in order.
final class Received<Value: Sendable>: Sendable {
    let stream: AsyncStream<Value>
    private let continuation: AsyncStream<Value>.Continuation
    init() { (stream, continuation) = AsyncStream.makeStream() }
    func append(_ value: Value) { continuation.yield(value) }
    /// Every value received until now; call once no more can come.
    func all() async -> [Value] {
        continuation.finish()
        var values: [Value] = []
        for await value in stream { values.append(value) }
        return values
    }
}

// The completion-handler overloads `@BridgedCompletion` wrote call back exactly once.
@Suite(.timeLimit(.minutes(1)))
struct BridgedCompletionRuntimeTests {
    @Test func inASwift5SDK_handlerCalledOnceWithTheValue() async throws {
        let received = Received<Result<String, any Error>>()
        let token = LegacyCatalog().title(of: 3) { received.append($0) }
        var iterator = received.stream.makeAsyncIterator()
        #expect(try await iterator.next()?.get() == "title 3")
        token.cancel()  // after the call back: changes nothing
        #expect(await received.all().isEmpty)
    }

    @Test func value_handlerCalledOnceWithIt() async throws {
        try await withLeakTracking { tracker in
            let repository = Repository()
            tracker.track(repository)
            let received = Received<Result<String, any Error>>()
            let token = repository.load(id: 3) { received.append($0) }
            let call = try await repository.api.nextInvocation()
            #expect(call.request == 3)
            call.complete(with: "three")
            var iterator = received.stream.makeAsyncIterator()
            #expect(try await iterator.next()?.get() == "three")
            token.cancel()  // after the call back: changes nothing
            #expect(await received.all().isEmpty)
        }
    }

    @Test func cancel_callsBackOnceWithCancellationError_andCancelsTheWork() async throws {
        let repository = Repository()
        let received = Received<Result<String, any Error>>()
        let token = repository.load(id: 1) { received.append($0) }
        let call = try await repository.api.nextInvocation()
        token.cancel()
        await call.waitForCancellation()
        let results = await received.all()
        #expect(results.count == 1)
        #expect(throws: CancellationError.self) { try results.first?.get() }
    }

    @MainActor @Test func mainActorDelivery_errorHandlerOnTheMainActor() async throws {
        let repository = Repository()
        let received = Received<(any Error)?>()
        repository.refresh { error in
            MainActor.assertIsolated()
            received.append(error)
        }
        try await repository.api.nextInvocation().fail(BridgeError.timedOut)
        var iterator = received.stream.makeAsyncIterator()
        let error = await iterator.next()
        #expect((error ?? nil) as? BridgeError == .timedOut)
    }
}
#endif
