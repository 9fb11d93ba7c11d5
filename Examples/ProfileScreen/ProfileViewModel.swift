// The Swift 6 side: a @MainActor view model over the legacy SDK, with every bridge and none of
// `assumeIsolated`, `@preconcurrency`, `nonisolated(unsafe)` or `@unchecked`.
import Bridges
import Foundation
import ProfileLegacyKit

@MainActor
final class ProfileViewModel {
    private let client = LegacyClient()
    private let feed = LegacyFeed()
    let bag = CancellationBag()

    private(set) var title = "…"
    private(set) var rendered: [String] = []
    private(set) var history: [String] = []
    private(set) var user: User?
    private var titleToken: Cancellation?
    private var historyWaiter: (count: Int, continuation: CheckedContinuation<Void, Never>)?

    var legacyClient: LegacyClient { client }

    func render(_ item: String) { rendered.append(item) }

    /// withCallback: the SDK's `User` is a plain class and calls back on the SDK's own queue.
    func loadUser(_ id: Int) async throws -> User {
        // snippet:begin swift6User.after
        let user = try await withCallback { done in client.fetchUser(id, completion: done) }
        // snippet:end swift6User.after
        self.user = user
        return user
    }

    /// withCallback with a timeout: the request handle is main-thread only, so the model keeps
    /// it and the token cancels it from the main actor.
    func loadAvatar(timeout: BridgeTimeout) async throws -> Data {
        guard let user else { throw LegacyError(code: 1) }
        // snippet:begin swift6Handle.after
        return try await withCallback(timeout: timeout) { done in
            let request = client.fetchAvatar(for: user, completion: done)
            return Cancellation { request.cancel() }  // runs on the main actor
        }
        // snippet:end swift6Handle.after
    }

    /// withCompletion: the screen's old completion API, kept on top of the async one.
    // snippet:begin swift6Completion.after
    func loadTitle(completion: @escaping @MainActor (Result<String, any Error>) -> Void) -> Cancellation {
        withCompletion(on: .mainActor, completion) { try await self.loadUser(42).name }
    }
    // snippet:end swift6Completion.after

    /// subscribe and forEach(weak:) over the SDK's push feed.
    func play(_ items: [String]) async {
        let (titles, titleSink) = AsyncStream.makeStream(of: String.self)
        let (log, logSink) = AsyncStream.makeStream(of: String.self)
        // `@Sendable`: the feed calls these on its own queue, not on the main actor.
        // snippet:begin swift6Feed.after
        feed.onItem = { @Sendable item in
            titleSink.yield(item)
            logSink.yield(item)
        }
        // snippet:end swift6Feed.after
        feed.onEnd = { @Sendable in
            titleSink.finish()
            logSink.finish()
        }
        log.forEach(weak: self, in: bag) { owner, item in owner.appendHistory(item) }
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            // snippet:begin swift6Subscribe.after
            titleToken = titles.subscribe(on: .mainActor, onElement: { item in
                self.title = item
                self.render(item)
            }, onFinish: { _ in finished.resume() })
            // snippet:end swift6Subscribe.after
            feed.play(items)
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if history.count >= items.count { continuation.resume() } else { historyWaiter = (items.count, continuation) }
        }
    }

    private func appendHistory(_ item: String) {
        history.append(item)
        if let waiter = historyWaiter, history.count >= waiter.count {
            historyWaiter = nil
            waiter.continuation.resume()
        }
    }
}
