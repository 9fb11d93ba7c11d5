// `onLateResult:` written before the body without a type. Which forms compile and fail is
// checked by .ci/check-builder-diagnostics.sh (untyped-late-*.swift, allowed-late.swift); this
// checks what the one that compiles for an `(Error?)` handler does at run time.
import Bridges
import LegacySDK
import Testing

final class SaveRequest: Sendable {
    func cancel() {}
}

/// An `(Error?)` legacy call that fails at once.
func failingSave(completion: @escaping @Sendable ((any Error)?) -> Void) -> SaveRequest {
    completion(LegacyError.failed("disk full"))
    return SaveRequest()
}

@Suite("withCallback: onLateResult written before the body")
struct WithCallbackLateResultFormTests {
    @Test func errorHandler_untypedLateBeforeTheBody_throwsTheAPIsError() async {
        // It used to bind the `(T)` shape with T == (any Error)?: the error came back as the
        // call's value, and nothing was thrown.
        await #expect(throws: LegacyError.failed("disk full")) {
            try await withCallback(onLateResult: { late in print("late", late as Any) }) { done in
                let request = failingSave(completion: done)
                return Cancellation { request.cancel() }
            }
        }
    }
}
