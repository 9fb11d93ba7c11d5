// Bodies the builder keeps the token of, and the two fixes the error message asks for. Must
// type-check with no warning at all (-warnings-as-errors): an unused `Cancellation` or a
// deprecated fallback would be a token silently dropped.
import Bridges

func singleCall() async throws -> Int {
    try await withCallback { done in start(completion: done) }  // start(...) returns the token
}

func checkFirst(_ stale: Bool) async throws -> Int {
    try await withCallback { done in
        if stale { print("reset the cache") }
        let request = load(1, completion: done)
        Cancellation { request.cancel() }
    }
}

func ifElse(_ id: Int?) async throws -> Int {
    try await withCallback { done in
        if let id {
            let request = load(id, completion: done)
            Cancellation { request.cancel() }
        } else {
            done(.failure(LegacyError()))
        }
    }
}

func switched(_ mode: Mode) async throws -> Int {
    try await withCallback { done in
        switch mode {
        case .fresh:
            let request = load(1, completion: done)
            Cancellation { request.cancel() }
        case .cached:
            done(.success(0))
        }
    }
}

func looped() async throws -> Int {
    try await withCallback { (done: @escaping @Sendable (Int?, (any Error)?) -> Void) in
        for attempt in 0..<3 { print("attempt", attempt) }
        let request = fetch(1, completion: done)
        Cancellation { request.cancel() }
    }
}

func available() async throws {
    try await withCallback { (done: @escaping @Sendable () -> Void) in
        if #available(macOS 10.15, *) { print("new path") }
        let request = animate(completion: done)
        Cancellation { request.cancel() }
    }
}

// The message's first fix: a guard, and the token returned explicitly.
func guardedWithReturn(_ id: Int?) async throws -> Int {
    try await withCallback { done in
        guard let id else { throw LegacyError() }
        let request = load(id, completion: done)
        return Cancellation { request.cancel() }
    }
}

// The message's second fix: a call that cannot be cancelled says so.
func guardedNotCancellable(_ id: Int?) async throws -> Int {
    try await withCallback { done in
        guard let id else { throw LegacyError() }
        _ = load(id, completion: done)
        return nil
    }
}

func typed(_ id: Int?) async -> Int? {
    try? await withTypedCallback { done in
        guard let id else { done(.failure(LegacyError())); return nil }
        let request = loadTyped(id, completion: done)
        return Cancellation { request.cancel() }
    }
}

func otherShapes() async throws {
    try await withCallback { (done: @escaping @Sendable ((any Error)?) -> Void) in
        do { try validate(1) } catch { print(error) }
        let request = save(completion: done)
        return Cancellation { request.cancel() }
    }
    _ = try await withCallback { (done: @escaping @Sendable (Int) -> Void) in
        if Bool.random() { print("x") }
        let request = locate(completion: done)
        Cancellation { request.cancel() }
    }
}

/// A clock injected as an existential (the app's `ContinuousClock`, the tests' `TestClock`).
@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
func injectedClock(_ clock: any Clock<Duration>) async throws -> Int {
    try await withCallback(timeout: .after(.seconds(5), on: clock)) { done in
        let request = load(1, completion: done)
        return Cancellation { request.cancel() }
    }
}

@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
func injectedClockBuilderBody(_ clock: any Clock<Duration>) async throws {
    try await withCallback(timeout: .after(.seconds(5), on: clock)) { done in
        let request = animate(completion: done)
        Cancellation { request.cancel() }
    }
}

/// A concrete clock still takes the generic form (no ambiguity with the existential one).
@available(macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, *)
func concreteClock() async throws -> Int {
    try await withCallback(timeout: .after(.seconds(5), on: ContinuousClock())) { done in
        start(completion: done)
    }
}
