// `withCallback(onLateResult: { late in … }) { done in … }`: an untyped late-result handler
// written BEFORE the body, made a compile error that says what to write.
//
// Why: the type checker solves a call's closures left to right, so an untyped multi-statement
// `onLateResult:` closure is solved before the body that says what `late` is, and the call failed
// with "cannot use explicit 'return' statement in the body of result builder" or "failed to
// produce diagnostic" (see WithCallbackTrailingLateResult.swift). The overloads below give
// `late` a type that needs nothing from the body (`UntypedLateResult`, which takes any use a
// result would get), so such a call finds them when no real overload fits, and fails with their
// message. They never win over a real overload: an unavailable declaration ranks below every
// available one, so typed handlers, single-expression ones (`{ late.append($0) }`) and the
// trailing form resolve as before.

/// What `late` is in an untyped `onLateResult:` closure written before the body: nothing, since
/// such a call does not compile (it fails with a message that says what to write). It takes any
/// use a result would get (`case .success(let value)`, `value.close()`, `try late.get()`) so that
/// the message, not an unrelated error, is what the compiler reports.
@dynamicMemberLookup
public enum UntypedLateResult {
    case success(UntypedLateValue)
    case failure(any Error)

    public subscript(dynamicMember name: String) -> UntypedLateValue { UntypedLateValue() }
    public func get() throws -> UntypedLateValue { UntypedLateValue() }
}

/// A value in an ``UntypedLateResult``: takes any member access or call.
@dynamicMemberLookup
@dynamicCallable
public struct UntypedLateValue {
    public subscript(dynamicMember name: String) -> UntypedLateValue { UntypedLateValue() }
    public func dynamicallyCall(withArguments arguments: [Any]) -> UntypedLateValue { self }
}

@usableFromInline let untypedLateResultMessage =
    "an untyped onLateResult: closure written before the body cannot learn what 'late' is (Swift reads it first). Write it after the body: withCallback { done in … } onLateResult: { late in … }, or give 'late' its type: onLateResult: { (late: Result<Value, any Error>) in … }"

/// The fallback of every `withCallback` shape for an untyped `onLateResult:` written before the
/// body (see the top of this file): unavailable, with the message that says what to write.
@available(
    *, unavailable,
    message:
        "an untyped onLateResult: closure written before the body cannot learn what 'late' is (Swift reads it first). Write it after the body: withCallback { done in … } onLateResult: { late in … }, or give 'late' its type: onLateResult: { (late: Result<Value, any Error>) in … }"
)
public func withCallback<Done>(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    onLateResult: @escaping @Sendable (UntypedLateResult) -> Void,
    fileID: String = #fileID,
    line: UInt = #line,
    _ body: (_ done: @escaping @Sendable (Done) -> Void) throws -> Cancellation?
) async throws -> Done {
    fatalError(untypedLateResultMessage)
}

/// The same fallback for the `(T?, Error?)` shape, whose handler takes two values.
@available(
    *, unavailable,
    message:
        "an untyped onLateResult: closure written before the body cannot learn what 'late' is (Swift reads it first). Write it after the body: withCallback { done in … } onLateResult: { late in … }, or give 'late' its type: onLateResult: { (late: Result<Value, any Error>) in … }"
)
public func withCallback<Value>(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    onLateResult: @escaping @Sendable (UntypedLateResult) -> Void,
    fileID: String = #fileID,
    line: UInt = #line,
    _ body: (_ done: @escaping @Sendable (Value?, (any Error)?) -> Void) throws -> Cancellation?
) async throws -> Value {
    fatalError(untypedLateResultMessage)
}

/// The same fallback for `withTypedCallback`.
@available(
    *, unavailable,
    message:
        "an untyped onLateResult: closure written before the body cannot learn what 'late' is (Swift reads it first). Write it after the body: withTypedCallback { done in … } onLateResult: { late in … }, or give 'late' its type: onLateResult: { (late: Result<Value, MyError>) in … }"
)
public func withTypedCallback<Success, Failure: Error>(
    isolation: isolated (any Actor)? = #isolation,
    timeout: BridgeTimeout? = nil,
    onLateResult: @escaping @Sendable (UntypedLateResult) -> Void,
    fileID: String = #fileID,
    line: UInt = #line,
    _ body: (_ done: @escaping @Sendable (Result<Success, Failure>) -> Void) throws -> Cancellation?
) async throws(CallbackFailure<Failure>) -> Success {
    fatalError(untypedLateResultMessage)
}
