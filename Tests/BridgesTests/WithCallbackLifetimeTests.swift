import Bridges
import Dispatch
import Testing

/// A legacy call's token: what a bridge's `Cancellation` holds, and must let go of.
private final class Request: Sendable { func cancel() {} }

@Suite("withCallback: lifetimes", .timeLimit(.minutes(3)))
struct WithCallbackLifetimeTests {
    @Test func legacyObjectAndCallbackCaptures_areReleasedAfterCompletion() async throws {
        weak var weakRequest: Request?
        let callbackCaptureReleased = Signal()
        let value = try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
            let request = Request()
            weakRequest = request
            let canary = Canary(released: callbackCaptureReleased)
            DispatchQueue.global().async {
                _ = canary
                done(.success(1))
            }
            return Cancellation { request.cancel() }
        }
        #expect(value == 1)
        await callbackCaptureReleased.wait()
        #expect(weakRequest == nil, "the bridge must not keep the legacy call's token after completion")
    }

    @Test func legacyObject_isReleasedAfterCancellation() async throws {
        let weakRequest = Weak<Request>()
        let api = LegacyAPI<@Sendable (Result<Int, any Error>) -> Void>()
        let task = Task {
            try await withCallback { done in
                _ = api.start(done)
                let request = Request()
                weakRequest.object = request
                return Cancellation { request.cancel() }
            }
        }
        await api.started.wait()
        task.cancel()
        _ = await task.result
        api.drop()
        #expect(weakRequest.object == nil)
    }
}
