import Bridges
import Dispatch
import Foundation

/// A legacy client in the style of years-old iOS code: completion handlers, called on a queue,
/// with a request object that can be cancelled. Two of its methods are buggy on purpose.
final class LegacyUserClient: Sendable {
    final class Request: Sendable {
        private let cancelled = LegacyFlag()
        private let completion: LockedBox<(@Sendable (Result<String, any Error>) -> Void)?>
        private let onFinish: @Sendable () -> Void
        init(
            completion: @escaping @Sendable (Result<String, any Error>) -> Void,
            onFinish: @escaping @Sendable () -> Void
        ) {
            self.completion = LockedBox(completion)
            self.onFinish = onFinish
        }
        var isCancelled: Bool { cancelled.isSet }
        /// Like `URLSessionTask.cancel()`: the request completes at once with an error.
        func cancel() {
            cancelled.set()
            finish(.failure(CancellationError()))
        }
        /// Calls the completion handler, the first time only.
        func finish(_ result: Result<String, any Error>) {
            guard
                let completion = completion.withValue({ value in
                    defer { value = nil }
                    return value
                })
            else { return }
            completion(result)
            onFinish()
        }
    }

    private let queue = DispatchQueue(label: "legacy-client")
    /// Work the client has started and not finished (so the tour can wait for its output).
    private let pending = DispatchGroup()
    /// Lets the tour watch what the client does (a request started).
    private let onRequest: @Sendable (Request) -> Void

    init(onRequest: @escaping @Sendable (Request) -> Void = { _ in }) {
        self.onRequest = onRequest
    }

    @discardableResult
    func fetchUser(
        id: Int, delay: DispatchTimeInterval = .milliseconds(5),
        completion: @escaping @Sendable (Result<String, any Error>) -> Void
    ) -> Request {
        pending.enter()
        let request = Request(completion: completion, onFinish: { [pending] in pending.leave() })
        onRequest(request)
        queue.asyncAfter(deadline: .now() + delay) { request.finish(.success("user-\(id)")) }
        return request
    }

    /// Objective-C style: `(value?, error?)`.
    func fetchAvatar(id: Int, completion: @escaping @Sendable ([UInt8]?, (any Error)?) -> Void) {
        pending.enter()
        queue.async { [pending] in
            completion([UInt8](repeating: UInt8(id), count: 4), nil)
            pending.leave()
        }
    }

    /// A buggy API: it forgets the completion handler on one code path.
    func fetchBanner(id: Int, completion: @escaping @Sendable (Result<[UInt8], any Error>) -> Void) {
        pending.enter()
        queue.async { [pending] in  // never calls `completion`, which is released when this method returns
            _ = id
            pending.leave()
        }
    }

    /// A buggy API: a retry path that forgets to `return` calls the completion handler twice.
    func fetchToken(completion: @escaping @Sendable (Result<String, any Error>) -> Void) {
        pending.enter()
        queue.async { [pending] in
            completion(.success("token-1"))
            completion(.success("token-2"))
            pending.leave()
        }
    }

    /// Returns once everything the client started has finished (its handlers have returned).
    func idle() async {
        await withCheckedContinuation { continuation in
            pending.notify(queue: .global()) { continuation.resume() }
        }
    }
}

/// A tiny thread-safe flag for the tour's legacy fakes.
final class LegacyFlag: Sendable {
    private let lock = DispatchSemaphore(value: 1)
    nonisolated(unsafe) private var value = false  // guarded by `lock`
    var isSet: Bool {
        lock.wait()
        defer { lock.signal() }
        return value
    }
    func set() {
        lock.wait()
        value = true
        lock.signal()
    }
}

private func show(_ result: Result<String, any Error>) {}

// MARK: - Continuations written by hand: how the legacy bridges fail

/// The usual hand-written bridge: a checked continuation around the completion handler.
func fetchUserByHand(_ client: LegacyUserClient, id: Int, delay: DispatchTimeInterval) async throws -> String {
    try await withCheckedThrowingContinuation { continuation in
        client.fetchUser(id: id, delay: delay) { result in continuation.resume(with: result) }
    }
}

/// Child-process demonstrations the tour runs by re-executing itself (`main.swift` dispatches on
/// the argument): a legacy failure that kills the process cannot be shown in the tour's own.
let crashDemonstrations: [String: @Sendable () async -> Never] = [
    "--legacy-double-resume": {
        let client = LegacyUserClient()
        let token = try? await withCheckedThrowingContinuation { continuation in
            client.fetchToken { result in continuation.resume(with: result) }  // called twice
        }
        await client.idle()  // the second call resumes the continuation again
        Swift.print("resumed twice and survived with \(token ?? "nil")")
        exit(0)
    }
]

/// Runs the tour's own executable with `argument`; returns how it ended and what it wrote on stderr.
private func runChild(_ argument: String) async throws -> (ending: String, stderr: String) {
    #if os(macOS) || os(Linux)
    let process = Process()
    process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = [argument]
    var environment = ProcessInfo.processInfo.environment
    environment["SWIFT_BACKTRACE"] = "enable=no"  // the crash message, not a symbolicated backtrace
    process.environment = environment
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    let ended = TourSignal()
    process.terminationHandler = { _ in ended.open() }
    try process.run()
    await ended.wait()
    let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let ending =
        process.terminationReason == .uncaughtSignal
        ? "killed by signal \(process.terminationStatus)"
        : "exited with status \(process.terminationStatus)"
    return (ending, text)
    #else
    throw ChapterSkipped("this platform cannot start a child process")
    #endif
}

// MARK: - The chapter

@available(BridgesClock, *)  // the tour measures with Clock and Duration
var singleShotChapter: Chapter {
    Chapter(name: "single-shot", title: "Completion handler → async") {
        let client = LegacyUserClient()

        block(.legacy, "completion handlers, and continuations written by hand")
        // snippet:begin singleShot.before
        client.fetchUser(id: 42) { result in
            switch result {
            case .success(let user): print("loaded \(user)")
            case .failure(let error): print("failed: \(error)")
            }
        }
        // snippet:end singleShot.before
        await client.idle()

        // (value?, error?) handlers.
        // snippet:begin valueOrError.before
        client.fetchAvatar(id: 42) { bytes, error in
            if let error { return print("failed: \(error)") }
            guard let bytes else { return print("neither bytes nor error?") }
            print("avatar: \(bytes.count) bytes")
        }
        // snippet:end valueOrError.before
        await client.idle()

        // Cancellation by hand: the request object had to be kept and cancelled by every caller.
        // snippet:begin cancellable.before
        let r = client.fetchUser(id: 7, delay: .seconds(30)) { result in
            show(result)
        }
        r.cancel()  // and every caller must remember to do this when its screen goes away
        // snippet:end cancellable.before
        try check(r.isCancelled, "the legacy request was cancelled by hand")

        // 1. A hand-written continuation does not pass cancellation on.
        do {
            let request = LockedBox<LegacyUserClient.Request?>(nil)
            let started = TourSignal()
            let watched = LegacyUserClient(onRequest: {
                request.value = $0
                started.open()
            })
            let task = Task { try await fetchUserByHand(watched, id: 7, delay: .milliseconds(200)) }
            await started.wait()
            let clock = ContinuousClock()
            let cancelledAt = clock.now
            task.cancel()
            let outcome = await task.result
            let waited = cancelledAt.duration(to: clock.now)
            say("hand-written continuation, task cancelled: it still waited \(waited.formatted) for the request,")
            say(
                "  which was never cancelled (isCancelled: \(request.value?.isCancelled ?? false)), and returned \(outcome)"
            )
            try check(
                (try? outcome.get()) == "user-7" && request.value?.isCancelled == false,
                "the hand-written bridge ignores cancellation")
            TourFigures.shared.record(
                "single-shot: a cancelled hand-written continuation waited \(waited.formatted) for a request nobody cancelled"
            )
        }

        // 2. A dropped handler leaves the awaiting task suspended forever.
        do {
            let resumed = LegacyFlag()
            let bodyReturned = TourSignal()
            let suspendedForever = Task {
                _ = try? await withCheckedThrowingContinuation { continuation in
                    client.fetchBanner(id: 1) { result in continuation.resume(with: result) }
                    bodyReturned.open()
                }
                resumed.set()
            }
            await bodyReturned.wait()
            await client.idle()  // the legacy API has finished and released the handler, uncalled
            flushStandardOutput()
            say(
                "hand-written continuation, handler dropped: the task resumed: \(resumed.isSet); nothing holds its continuation,"
            )
            say(
                "  so it stays suspended until the process exits (the Swift runtime's 'leaked its continuation' warning is on stderr)"
            )
            try check(!resumed.isSet, "a dropped handler leaves the hand-written bridge suspended")
            _ = suspendedForever  // deliberately never awaited: it never ends
        }

        // 3. A handler called twice crashes the process (shown in a child process).
        do {
            let child = try await runChild("--legacy-double-resume")
            let line = child.stderr.split(separator: "\n").first { $0.contains("Fatal error") }
            let message = line.map {
                String($0[($0.range(of: "Fatal error").map(\.lowerBound) ?? $0.startIndex)...].prefix(110)) + "…"
            }
            say("hand-written continuation, handler called twice: the process was \(child.ending); it wrote:")
            say("  \(message ?? "(nothing)")")
            try check(child.ending.hasPrefix("killed"), "a double resume of a checked continuation crashes")
        }

        block(.bridge, "withCallback, over the same legacy client")
        // snippet:begin singleShot.after
        let user = try await withCallback { done in
            client.fetchUser(id: 42, completion: done)
        }
        // snippet:end singleShot.after
        say("withCallback returned \(user)")
        try check(user == "user-42", "expected user-42, got \(user)")

        // snippet:begin valueOrError.after
        let bytes: [UInt8] = try await withCallback { done in
            client.fetchAvatar(id: 42, completion: done)
        }
        // snippet:end valueOrError.after
        say("(value?, error?) handler: \(bytes.count) bytes")
        try check(bytes.count == 4, "expected 4 bytes")

        // 1. Cancellation reaches the legacy request.
        do {
            let request = LockedBox<LegacyUserClient.Request?>(nil)
            let started = TourSignal()
            let watched = LegacyUserClient(onRequest: {
                request.value = $0
                started.open()
            })
            let task = Task { [client = watched] in
                // snippet:begin cancellable.after
                try await withCallback { done in
                    let r = client.fetchUser(id: 7, delay: .seconds(30), completion: done)
                    return Cancellation { r.cancel() }
                }
                // snippet:end cancellable.after
            }
            await started.wait()
            let clock = ContinuousClock()
            let cancelledAt = clock.now
            task.cancel()
            let outcome = await task.result
            let waited = cancelledAt.duration(to: clock.now)
            say(
                "task cancelled: it ended after \(waited.formatted) with \(outcome); legacy request cancelled: \(request.value?.isCancelled ?? false)"
            )
            try check((try? outcome.get()) == nil, "a cancelled bridge must throw")
            try check(request.value?.isCancelled == true, "cancellation must reach the legacy request")
            TourFigures.shared.record(
                "single-shot: a cancelled withCallback ended after \(waited.formatted) and cancelled the legacy request"
            )
        }

        // 2. A dropped handler becomes an error instead of a task suspended forever.
        do {
            let reports = LockedBox<[BridgeDiagnostic.Kind]>([])
            do {
                _ = try await Diagnostics.withHandler({ diagnostic in reports.value.append(diagnostic.kind) }) {
                    try await withCallback { done in client.fetchBanner(id: 1, completion: done) }
                }
                throw TourFailure("a dropped callback must throw")
            } catch BridgeError.callbackDropped {
                say(
                    "handler dropped: the task threw BridgeError.callbackDropped (it did not hang); diagnostics: \(reports.value)"
                )
            }
            try check(reports.value == [.callbackDropped], "a dropped handler is reported once")
        }

        // 3. A handler called twice: the first call wins, the second is reported, the process lives.
        do {
            let reports = LockedBox<[BridgeDiagnostic.Kind]>([])
            let token = try await Diagnostics.withHandler({ diagnostic in reports.value.append(diagnostic.kind) }) {
                try await withCallback { done in client.fetchToken(completion: done) }
            }
            await client.idle()  // the second call has happened
            say(
                "handler called twice: withCallback returned \(token); diagnostics: \(reports.value); the process lives"
            )
            try check(
                token == "token-1" && reports.value == [.callbackCalledTwice],
                "the first call wins, the second is reported")
        }
    }
}

@available(BridgesClock, *)
extension Duration {
    /// Milliseconds, for the tour's measurements.
    var formatted: String {
        let (seconds, attoseconds) = components
        let milliseconds = Double(seconds) * 1_000 + Double(attoseconds) / 1e15
        return milliseconds < 1 ? "<1 ms" : "\(Int(milliseconds.rounded())) ms"
    }
}

/// A value behind a lock, for the tour's glue code.
final class LockedBox<Value: Sendable>: @unchecked Sendable {  // every access goes through `lock`
    private let lock = DispatchSemaphore(value: 1)
    private var _value: Value
    init(_ value: Value) { _value = value }
    var value: Value {
        get {
            lock.wait()
            defer { lock.signal() }
            return _value
        }
        set {
            lock.wait()
            _value = newValue
            lock.signal()
        }
    }
    /// Reads and changes the value in one step.
    func withValue<R>(_ body: (inout Value) -> R) -> R {
        lock.wait()
        defer { lock.signal() }
        return body(&_value)
    }
}
