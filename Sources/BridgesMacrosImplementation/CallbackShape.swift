#if Macros
import SwiftSyntax

/// The completion-handler shapes `withCallback` bridges, read off a parameter's type.
enum CallbackShape {
    /// `(Result<T, E>) -> Void`; `failure` is `nil` when `E` is `Error`/`any Error` (untyped).
    case result(success: TypeSyntax, failure: TypeSyntax?)
    /// `(T?, Error?) -> Void`: `value` is `T`, without the `?`.
    case valueOrError(value: TypeSyntax)
    /// `(T) -> Void`.
    case value(TypeSyntax)
    /// `(Error?) -> Void`.
    case error
    /// `() -> Void`.
    case none

    /// What the async form returns, or `nil` for `Void`.
    var success: TypeSyntax? {
        switch self {
        case .result(let success, _): isVoid(success) ? nil : success
        case .valueOrError(let value): value
        case .value(let value): value
        case .error, .none: nil
        }
    }

    /// The type of `withCallback`'s `done` for this shape, as the closure parameter is written.
    var doneType: String {
        switch self {
        case .result(let success, let failure):
            "@escaping @Sendable (Result<\(success.trimmedDescription), \(failure?.trimmedDescription ?? "any Error")>) -> Void"
        case .valueOrError(let value): "@escaping @Sendable (\(value.trimmedDescription)?, (any Error)?) -> Void"
        case .value(let value): "@escaping @Sendable (\(value.trimmedDescription)) -> Void"
        case .error: "@escaping @Sendable ((any Error)?) -> Void"
        case .none: "@escaping @Sendable () -> Void"
        }
    }

    /// The handler's shape as the user wrote it, for messages: `(Result<User, APIError>) -> Void`.
    var spelling: String {
        switch self {
        case .result(let success, let failure):
            "(Result<\(success.trimmedDescription), \(failure?.trimmedDescription ?? "Error")>) -> Void"
        case .valueOrError(let value): "(\(value.trimmedDescription)?, Error?) -> Void"
        case .value(let value): "(\(value.trimmedDescription)) -> Void"
        case .error: "(Error?) -> Void"
        case .none: "() -> Void"
        }
    }
}

/// A completion-handler parameter, or why a parameter is not one `withCallback` can bridge.
enum HandlerReading {
    case handler(CallbackShape, escaping: Bool)
    /// The parameter is not a function at all: the declaration has no completion handler.
    case notAHandler
    /// A function type that no `withCallback` shape takes; the message says which and why.
    case unsupported(String)
}

/// Reads the type of a function's last parameter as a completion handler.
func readHandler(_ type: TypeSyntax) -> HandlerReading {
    var type = type
    var escaping = false
    var optional = false
    // Peel attributes (`@escaping`, `@Sendable`, `@MainActor`), parentheses and one optional.
    while true {
        if let attributed = type.as(AttributedTypeSyntax.self) {
            for case .attribute(let attribute) in attributed.attributes
            where attribute.attributeName.trimmedDescription == "escaping" {
                escaping = true
            }
            type = attributed.baseType
        } else if let tuple = type.as(TupleTypeSyntax.self), tuple.elements.count == 1,
            let only = tuple.elements.first, only.firstName == nil
        {
            type = only.type
        } else if let wrapped = type.as(OptionalTypeSyntax.self), !optional {
            optional = true
            type = wrapped.wrappedType
        } else if let wrapped = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self), !optional {
            optional = true
            type = wrapped.wrappedType
        } else {
            break
        }
    }
    guard let function = type.as(FunctionTypeSyntax.self) else { return .notAHandler }
    if function.effectSpecifiers?.asyncSpecifier != nil || function.effectSpecifiers?.throwsClause != nil {
        return .unsupported(
            "its completion handler `\(function.trimmedDescription)` is itself async or throws; a completion handler is a plain function that is called back"
        )
    }
    guard isVoid(function.returnClause.type) else {
        return .unsupported(
            "its completion handler returns `\(function.returnClause.type.trimmedDescription)`; withCallback can only bridge a handler that returns Void, because the bridge has nothing to answer it with"
        )
    }
    let parameters = function.parameters.map(\.type)
    let escapes = escaping || optional  // an optional function parameter is implicitly escaping
    switch parameters.count {
    case 0:
        return .handler(.none, escaping: escapes)
    case 1:
        let only = parameters[0]
        if isVoid(only) { return .handler(.none, escaping: escapes) }
        if let (success, failure) = resultArguments(only) {
            return .handler(.result(success: success, failure: isError(failure) ? nil : failure), escaping: escapes)
        }
        if let wrapped = optionalWrapped(only), isError(wrapped) { return .handler(.error, escaping: escapes) }
        return .handler(.value(only), escaping: escapes)
    case 2:
        if let error = optionalWrapped(parameters[1]), isError(error) {
            if let value = optionalWrapped(parameters[0]) {
                return .handler(.valueOrError(value: value), escaping: escapes)
            }
            return .unsupported(
                "its completion handler `\(function.trimmedDescription)` passes a non-optional value beside the error, which is not one of withCallback's shapes; make the value optional, `(\(parameters[0].trimmedDescription)?, Error?) -> Void`, or write the overload by hand: `withCallback { done in api.call { value, error in done(error.map { .failure($0) } ?? .success(value)) } }`"
            )
        }
        fallthrough
    default:
        return .unsupported(
            "its completion handler takes \(parameters.count) values, `\(function.trimmedDescription)`; withCallback bridges (Result<T, E>), (T?, Error?), (T), (Error?) and () handlers. Write the overload by hand and pass on what you keep: `withCallback { done in api.call { data, _, error in done(data, error) } }`"
        )
    }
}

/// `Void` or `()`.
func isVoid(_ type: TypeSyntax) -> Bool {
    if let tuple = type.as(TupleTypeSyntax.self) { return tuple.elements.isEmpty }
    return ["Void", "Swift.Void"].contains(type.trimmedDescription)
}

/// `Error`, `any Error`, `Swift.Error`, `any Swift.Error`.
func isError(_ type: TypeSyntax) -> Bool {
    var type = type
    if let tuple = type.as(TupleTypeSyntax.self), tuple.elements.count == 1, let only = tuple.elements.first {
        type = only.type
    }
    if let existential = type.as(SomeOrAnyTypeSyntax.self), existential.someOrAnySpecifier.tokenKind == .keyword(.any) {
        type = existential.constraint
    }
    return ["Error", "Swift.Error"].contains(type.trimmedDescription)
}

/// `T` of `T?` or `Optional<T>`.
func optionalWrapped(_ type: TypeSyntax) -> TypeSyntax? {
    if let optional = type.as(OptionalTypeSyntax.self) { return optional.wrappedType }
    if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Optional",
        let arguments = identifier.genericArgumentClause?.arguments, arguments.count == 1,
        let wrapped = Syntax(arguments.first!.argument).as(TypeSyntax.self)
    {
        return wrapped
    }
    return nil
}

/// `(T, E)` of `Result<T, E>` or `Swift.Result<T, E>`.
func resultArguments(_ type: TypeSyntax) -> (TypeSyntax, TypeSyntax)? {
    let clause: GenericArgumentClauseSyntax?
    if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Result" {
        clause = identifier.genericArgumentClause
    } else if let member = type.as(MemberTypeSyntax.self), member.trimmedDescription.hasPrefix("Swift.Result<") {
        clause = member.genericArgumentClause
    } else {
        return nil
    }
    guard let arguments = clause?.arguments, arguments.count == 2 else { return nil }
    let types = arguments.compactMap { Syntax($0.argument).as(TypeSyntax.self) }
    guard types.count == 2 else { return nil }
    return (types[0], types[1])
}
#endif
