/// Failures that come from the Combine bridges themselves rather than from the publisher.
///
/// A struct over a private code, so that cases can grow. Match with
/// `catch CombineBridgeError.finishedWithoutValue` or compare with `==`.
public struct CombineBridgeError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case finishedWithoutValue
    }

    private let code: Code
    private init(_ code: Code) { self.code = code }

    /// `publisher.value` was awaited and the publisher finished without sending anything.
    public static let finishedWithoutValue = CombineBridgeError(.finishedWithoutValue)

    public var description: String {
        switch code {
        case .finishedWithoutValue:
            "CombineBridgeError.finishedWithoutValue: the publisher finished without sending a value"
        }
    }

    /// Lets `catch CombineBridgeError.finishedWithoutValue` match any error.
    public static func ~= (pattern: CombineBridgeError, error: any Error) -> Bool {
        (error as? CombineBridgeError) == pattern
    }
}
