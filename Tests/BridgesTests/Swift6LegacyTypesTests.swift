// Swift 6 app code with legacy types: these shapes must compile in a `@MainActor` type without
// `assumeIsolated`, `@preconcurrency`, `nonisolated(unsafe)` or `@unchecked` (the file itself is
// the compile check), and do what the docs say at run time.
import Bridges
import BridgesTesting
import Dispatch
import TestSupport
import Testing

// MARK: - Legacy code, as it was written before Swift 6 (no Sendable anywhere)

final class LegacyUser {
    let id: Int
    var name: String
    init(id: Int, name: String) {
        self.id = id
        self.name = name
    }
}

/// A request handle of a main-thread-only legacy API.
final class LegacyRequest {
    private(set) var cancelledOnMainActor: Bool?
    /// Held until cancelled, as a real request holds its handler.
    var completion: ((LegacyUser?, Error?) -> Void)?
    func cancel() {
        cancelledOnMainActor = isOnMainActor()
        completion = nil
    }
}

/// A legacy client: a plain class, `(User?, Error?)` handlers, handles that must be cancelled on
/// the main thread. (It calls back synchronously: a legacy client that hops queues lives in a
/// Swift 5 module, as in Examples/ProfileScreen; this file is Swift 6.)
final class MainThreadUserClient {
    private(set) var requests: [LegacyRequest] = []
    private(set) var lastUser: LegacyUser?

    func fetchUser(_ id: Int, completion: @escaping (LegacyUser?, Error?) -> Void) {
        let user = LegacyUser(id: id, name: "user \(id)")
        lastUser = user
        completion(user, nil)
    }

    /// Never calls back; returns the handle that stops it.
    @discardableResult
    func fetchSlowly(_ id: Int, completion: @escaping (LegacyUser?, Error?) -> Void) -> LegacyRequest {
        let request = LegacyRequest()
        request.completion = completion
        requests.append(request)
        return request
    }
}

// MARK: - The Swift 6 view model

@MainActor
final class LegacyProfileModel {
    let client = MainThreadUserClient()
    var title = ""
    var rendered: [String] = []
    var user: LegacyUser?
    var request: LegacyRequest?
    let bag = CancellationBag()

    func render(_ item: String) { rendered.append(item) }

    var token: Cancellation?

    /// The shape from the field, verbatim.
    func start(_ items: CallbackStream<String, Never>) {
        token = items.subscribe(on: .mainActor) { item in
            self.title = item
            self.render(item)
        }
    }

    func observe(_ items: CallbackStream<String, Never>, ended: @escaping @MainActor () -> Void) -> Cancellation {
        items.subscribe(
            on: .mainActor,
            onElement: { item in
                self.title = item
                self.render(item)
            }, onFinish: { _ in ended() })
    }

    func loadName() async throws -> String {
        let user = try await withCallback { done in client.fetchUser(42, completion: done) }
        self.user = user
        return user.name
    }

    /// The old completion-handler API, kept on top of the async one.
    func load(completion: @escaping @MainActor (Result<String, any Error>) -> Void) -> Cancellation {
        withCompletion(on: .mainActor, completion) { try await self.loadName() }
    }

    /// A main-thread-only handle: kept by the model, cancelled from the main actor.
    func loadSlowly(timeout: BridgeTimeout) async throws -> LegacyUser {
        try await withCallback(timeout: timeout) { done in
            request = client.fetchSlowly(7, completion: done)
            Cancellation { Task { @MainActor in self.request?.cancel() } }
        }
    }
}

@Suite("Swift 6 app code with legacy types", .timeLimit(.minutes(3)))
@MainActor
struct Swift6LegacyTypesTests {
    @Test func withCallback_returnsTheNonSendableObjectTheLegacyClientMade() async throws {
        let model = LegacyProfileModel()
        #expect(try await model.loadName() == "user 42")
        #expect(model.user === model.client.lastUser, "the very object, handed over, not a copy")
    }

    @Test func subscribeOnMainActor_setsMainActorState() async {
        let model = LegacyProfileModel()
        let items = CallbackStream<String, Never> { sink in
            _ = sink.yield("a")
            _ = sink.yield("b")
            sink.finish()
            return Cancellation()
        }
        let done = Gate()
        let token = model.observe(items) { done.open() }
        await done.wait()
        #expect(model.title == "b")
        #expect(model.rendered == ["a", "b"])
        model.start(items)  // the verbatim shape runs too
        token.cancel()
        model.token?.cancel()
    }

    @Test func withCompletionOnMainActor_callsTheMainActorHandler() async {
        let model = LegacyProfileModel()
        let called = Gate()
        var result: String?
        model.load { value in
            result = try? value.get()
            called.open()
        }.store(in: model.bag)
        await called.wait()
        #expect(result == "user 42")
    }

    /// The timeout cancels the legacy call in the caller's isolation: on the main actor here.
    @Test func timeout_cancelsTheLegacyCallOnTheCallersActor() async throws {
        let clock = TestClock()
        let model = LegacyProfileModel()
        let task = Task { _ = try await model.loadSlowly(timeout: .after(.seconds(3), on: clock)) }
        await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(3))
        await #expect(throws: BridgeError.timedOut) { try await task.value }
        // The token hops to the main actor; give that job its turn.
        await MainActor.run {}
        let cancelled = Gate()
        Task { @MainActor in cancelled.open() }
        await cancelled.wait()
        #expect(model.client.requests.count == 1)
        #expect(model.client.requests.first?.cancelledOnMainActor == true)
    }

    /// The legacy call's token itself runs on the caller's actor when the timeout fires (it ran
    /// on the timeout's pool thread before).
    @Test func timeout_runsTheLegacyCancellationOnTheMainActor_forAMainActorCaller() async throws {
        let clock = TestClock()
        let ranOnMainActor = Collected<Bool>()
        let api = LegacyAPI<@Sendable (Result<Int, any Error>) -> Void>()
        let task = Task { @MainActor in
            try await withCallback(timeout: .after(.seconds(1), on: clock)) { done in
                _ = api.start(done)
                Cancellation { ranOnMainActor.append(isOnMainActor()) }
            }
        }
        await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(1))
        await #expect(throws: BridgeError.timedOut) { try await task.value }
        #expect(ranOnMainActor.values == [true])
    }
}
