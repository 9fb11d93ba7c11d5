import Bridges
import Dispatch
import TestSupport
import Testing

@Suite("withCallback: shapes", .timeLimit(.minutes(3)))
struct WithCallbackShapeTests {
    // MARK: - Result<T, E>

    @Test func resultShape_whenSucceeds_returnsValue() async throws {
        let value = try await withCallback { (done: @escaping @Sendable (Result<Int, TestError>) -> Void) in
            done(.success(1))
        }
        #expect(value == 1)
    }

    @Test func resultShape_whenFails_throwsTheLegacyErrorAsIs() async {
        await #expect(throws: TestError(code: 7)) {
            try await withCallback { (done: @escaping @Sendable (Result<Int, TestError>) -> Void) in
                done(.failure(TestError(code: 7)))
            }
        }
    }

    @Test func resultShape_whenCalledLaterOnAnotherThread_returnsValue() async throws {
        let value = try await withCallback { (done: @escaping @Sendable (Result<String, any Error>) -> Void) in
            DispatchQueue.global().async { done(.success("later")) }
        }
        #expect(value == "later")
    }

    // MARK: - (T?, Error?)

    @Test func valueOrError_whenValue_returnsIt() async throws {
        let value: Int = try await withCallback { done in done(3, nil) }
        #expect(value == 3)
    }

    @Test func valueOrError_whenError_throwsIt_evenWithAValue() async {
        await #expect(throws: TestError(code: 1)) {
            let _: Int = try await withCallback { done in done(3, TestError(code: 1)) }
        }
    }

    @Test func valueOrError_whenNeither_throwsMissingValueAndReports() async throws {
        let (error, diagnostics) = await capturingDiagnostics { () async -> (any Error)? in
            do {
                let _: Int = try await withCallback { done in done(nil, nil) }
                return nil
            } catch { return error }
        }
        #expect(error as? BridgeError == .missingValueAndError)
        #expect(diagnostics.map(\.kind) == [.callbackWithoutValueOrError])
        #expect(diagnostics.first?.fileID == #fileID)
    }

    // MARK: - (T)

    @Test func valueShape_returnsValue() async throws {
        let value = try await withCallback { (done: @escaping @Sendable (String) -> Void) in done("v") }
        #expect(value == "v")
    }

    // MARK: - (Error?)

    @Test func errorShape_whenNil_succeeds() async throws {
        try await withCallback { (done: @escaping @Sendable ((any Error)?) -> Void) in done(nil) }
    }

    @Test func errorShape_whenError_throwsIt() async {
        await #expect(throws: TestError(code: 2)) {
            try await withCallback { (done: @escaping @Sendable ((any Error)?) -> Void) in done(TestError(code: 2)) }
        }
    }

    // MARK: - ()

    @Test func voidShape_returnsWhenCalled() async throws {
        let api = LegacyAPI<@Sendable () -> Void>()
        async let finished: Void = withCallback { done in _ = api.start(done) }
        await api.started.wait()
        api.stored()
        try await finished
    }

    // MARK: - Body

    @Test func body_whenItThrows_rethrowsAndLateCallbackGoesToOnLateResult() async throws {
        let late = Collected<Result<Int, any Error>>()
        let api = LegacyAPI<@Sendable (Result<Int, any Error>) -> Void>()
        await #expect(throws: TestError(code: 9)) {
            try await withCallback(onLateResult: { late.append($0) }) { done in
                _ = api.start(done)
                try failToStart(code: 9)  // e.g. a request that can't be built after registering
            }
        }
        api.stored(.success(1))
        #expect(late.count == 1)
    }

    @Test func body_runsInTheCallersIsolation() async throws {
        @MainActor final class Screen { var title = "" }
        let screen = Screen()
        let value = try await { @MainActor in
            try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                screen.title = "loading"  // main-actor state touched synchronously in the body
                done(.success(1))
            }
        }()
        #expect(value == 1)
        #expect(await screen.title == "loading")
    }
}
