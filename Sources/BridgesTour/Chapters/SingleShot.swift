import Bridges
import Dispatch

/// A legacy client in the style of years-old iOS code: completion handlers, called on a queue,
/// with a request object that can be cancelled.
final class LegacyUserClient: Sendable {
    final class Request: Sendable {
        private let state = LegacyFlag()
        var isCancelled: Bool { state.isSet }
        func cancel() { state.set() }
    }

    private let queue = DispatchQueue(label: "legacy-client")
    /// Lets the tour watch what the client does (a request started).
    private let onRequest: @Sendable (Request) -> Void

    init(onRequest: @escaping @Sendable (Request) -> Void = { _ in }) {
        self.onRequest = onRequest
    }

    @discardableResult
    func fetchUser(id: Int, delay: DispatchTimeInterval = .milliseconds(5), completion: @escaping @Sendable (Result<String, any Error>) -> Void) -> Request {
        let request = Request()
        onRequest(request)
        queue.asyncAfter(deadline: .now() + delay) {
            if request.isCancelled { return completion(.failure(CancellationError())) }
            completion(.success("user-\(id)"))
        }
        return request
    }

    /// Objective-C style: `(value?, error?)`.
    func fetchAvatar(id: Int, completion: @escaping @Sendable ([UInt8]?, (any Error)?) -> Void) {
        queue.async { completion([UInt8](repeating: UInt8(id), count: 4), nil) }
    }

    /// A buggy API: it forgets the completion handler on one code path.
    func fetchBanner(id: Int, completion: @escaping @Sendable (Result<[UInt8], any Error>) -> Void) {
        queue.async { _ = id }  // never calls `completion`; the closure is released here
    }
}

/// A tiny thread-safe flag for the tour's legacy fakes.
final class LegacyFlag: Sendable {
    private let lock = DispatchSemaphore(value: 1)
    nonisolated(unsafe) private var value = false  // guarded by `lock`
    var isSet: Bool { lock.wait(); defer { lock.signal() }; return value }
    func set() { lock.wait(); value = true; lock.signal() }
}

private func show(_ result: Result<String, any Error>) {}

let singleShotChapter = Chapter(name: "single-shot", title: "Completion handler → async") {
    let client = LegacyUserClient()

    // snippet:begin singleShot.before
    client.fetchUser(id: 42) { result in
        switch result {
        case .success(let user): print("loaded \(user)")
        case .failure(let error): print("failed: \(error)")
        }
    }
    // snippet:end singleShot.before

    // snippet:begin singleShot.after
    let user = try await withCallback { done in
        client.fetchUser(id: 42, completion: done)
    }
    // snippet:end singleShot.after
    say("withCallback delivered \(user)")
    try check(user == "user-42", "expected user-42, got \(user)")

    // (value?, error?) handlers.
    // snippet:begin valueOrError.before
    client.fetchAvatar(id: 42) { bytes, error in
        if let error { return print("failed: \(error)") }
        guard let bytes else { return print("neither bytes nor error?") }
        print("avatar: \(bytes.count) bytes")
    }
    // snippet:end valueOrError.before
    // snippet:begin valueOrError.after
    let bytes: [UInt8] = try await withCallback { done in
        client.fetchAvatar(id: 42, completion: done)
    }
    // snippet:end valueOrError.after
    say("(value?, error?) handler bridged: \(bytes.count) bytes")
    try check(bytes.count == 4, "expected 4 bytes")

    // Cancellation reaches the legacy request.
    let request = LockedBox<LegacyUserClient.Request?>(nil)
    let started = TourSignal()
    let watched = LegacyUserClient(onRequest: { request.value = $0; started.open() })
    let task = Task { [client = watched] in
        // snippet:begin cancellable.after
        try await withCallback { done in
            let r = client.fetchUser(id: 7, delay: .seconds(30), completion: done)
            return Cancellation { r.cancel() }
        }
        // snippet:end cancellable.after
    }
    await started.wait()
    task.cancel()
    let outcome = await task.result
    say("cancelled task ended with \(outcome), legacy request cancelled: \(request.value?.isCancelled ?? false)")
    try check((try? outcome.get()) == nil, "a cancelled bridge must throw")
    try check(request.value?.isCancelled == true, "cancellation must reach the legacy request")
    // The same call before: the request object had to be kept and cancelled by hand.
    // snippet:begin cancellable.before
    let r = client.fetchUser(id: 7, delay: .seconds(30)) { result in
        show(result)
    }
    r.cancel()  // and every caller must remember to do this when its screen goes away
    // snippet:end cancellable.before
    try check(r.isCancelled, "the legacy request was cancelled by hand")

    // A dropped callback becomes an error instead of a task suspended forever.
    do {
        _ = try await Diagnostics.withHandler({ say("diagnostic: \($0.kind)") }) {
            try await withCallback { done in client.fetchBanner(id: 1, completion: done) }
        }
        throw TourFailure("a dropped callback must throw")
    } catch BridgeError.callbackDropped {
        say("dropped callback → BridgeError.callbackDropped (the task did not hang)")
    }
}

/// A value behind a lock, for the tour's glue code.
final class LockedBox<Value: Sendable>: @unchecked Sendable {  // every access goes through `lock`
    private let lock = DispatchSemaphore(value: 1)
    private var _value: Value
    init(_ value: Value) { _value = value }
    var value: Value {
        get { lock.wait(); defer { lock.signal() }; return _value }
        set { lock.wait(); _value = newValue; lock.signal() }
    }
}
