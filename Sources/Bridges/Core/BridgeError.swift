/// Failures that come from the bridge itself rather than from the legacy API.
///
/// A struct over a private code, so that cases can grow without breaking `switch`es. Match with
/// `catch BridgeError.callbackDropped` or compare with `==`.
public struct BridgeError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case callbackDropped, timedOut, missingValueAndError, sinkDropped
    }

    private let code: Code
    private init(_ code: Code) { self.code = code }

    /// The legacy API released its completion handler without ever calling it. Without the
    /// bridge the awaiting task would have been suspended forever.
    public static let callbackDropped = BridgeError(.callbackDropped)
    /// The `timeout:` given to the bridge elapsed first; the legacy call was cancelled.
    public static let timedOut = BridgeError(.timedOut)
    /// A `(T?, Error?)` completion handler was called with `nil` for both.
    public static let missingValueAndError = BridgeError(.missingValueAndError)

    /// A throwing stream's producer was lost: every copy of a ``CallbackStream``'s sink was
    /// released (or a ``ThrowingBroadcast`` was released) without `finish()`. The consumer's loop
    /// throws this instead of ending as if the source had completed (Kotlin's `callbackFlow`
    /// fails the same way when its block returns without `awaitClose`).
    public static let sinkDropped = BridgeError(.sinkDropped)

    public var description: String {
        switch code {
        case .callbackDropped:
            "BridgeError.callbackDropped: the legacy API released its completion handler without calling it"
        case .timedOut:
            "BridgeError.timedOut: the bridge's timeout elapsed before the legacy API called back"
        case .missingValueAndError:
            "BridgeError.missingValueAndError: a (value?, error?) completion handler was called with neither"
        case .sinkDropped:
            "BridgeError.sinkDropped: the producer was released without finishing the stream (its source was lost, not completed)"
        }
    }

    /// Lets `catch BridgeError.timedOut` and `case BridgeError.timedOut` match any error.
    public static func ~= (pattern: BridgeError, error: any Error) -> Bool {
        (error as? BridgeError) == pattern
    }

    /// This error as a stream's `Failure`: itself where `Failure` can hold it (`any Error`,
    /// `BridgeError`), the failure a ``BridgeErrorConvertible`` type makes of it, else nil (a
    /// typed failure that cannot say it).
    @usableFromInline
    func asFailure<Failure: Error>(_: Failure.Type) -> Failure? {
        if let failure = self as? Failure { return failure }
        if let convertible = Failure.self as? any BridgeErrorConvertible.Type {
            return convertible.init(bridgeError: self) as? Failure
        }
        return nil
    }
}

/// A failure type of your own that can also carry a ``BridgeError``, so that a stream typed by it
/// can say it ended for one of Bridges' reasons.
///
/// A `CallbackStream<Element, MyError>` (or a `ThrowingBroadcast`, or `shared()` over them) whose
/// producer is lost (every copy of its sink released without `finish()`) cannot throw
/// ``BridgeError/sinkDropped``: `throws(MyError)` throws only `MyError`. Conform `MyError` and
/// the loop throws `MyError(bridgeError: .sinkDropped)` instead of ending as if the source had
/// completed. Without the conformance such a loop ends with `nil`, and the lost producer is
/// reported through ``Diagnostics`` (`sinkDropped`) with what to do.
///
/// ```swift
/// enum FeedError: Error, BridgeErrorConvertible {
///     case network(Int)
///     case bridge(BridgeError)
///     init(bridgeError: BridgeError) { self = .bridge(bridgeError) }
/// }
/// ```
public protocol BridgeErrorConvertible: Error {
    /// The failure for a stream Bridges ended: `.sinkDropped` when its producer was lost.
    init(bridgeError: BridgeError)
}
