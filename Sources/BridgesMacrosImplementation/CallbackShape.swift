#if Macros
import SwiftSyntax

/// The completion-handler shapes the macros bridge, read off a parameter's type.
///
/// The first five are `withCallback`'s own shapes and the handler is `done` itself. The others
/// are what Apple's importer and Xcode's "Add Async Wrapper" also turn into `async` methods; the
/// generated body adapts them, in a closure it passes in place of the handler, to one of the five.
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
    /// Values beside a trailing optional error, other than `(T?, Error?)`: `(Bool, Error?)`,
    /// `(T?, NSError?)`, `(Data?, URLResponse?, Error?)`, `(APIError?)`. An error ends the wait with
    /// it; otherwise every optional value must be there (a `nil` one throws
    /// `BridgeError.missingValueAndError`, as `(T?, Error?)` does), and the values are returned,
    /// unwrapped, as a tuple when there are several.
    case valuesAndError(values: [TypeSyntax])
    /// Two or more values and no error: returned as a tuple, as they are.
    case values([TypeSyntax])

    /// What the async form returns, or `nil` for `Void`.
    var success: TypeSyntax? {
        switch self {
        case .result(let success, _): isVoid(success) ? nil : success
        case .valueOrError(let value): value
        case .value(let value): value
        case .error, .none: nil
        case .valuesAndError(let values): tuple(values.map { optionalWrapped($0) ?? $0 })
        case .values(let values): tuple(values)
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
        case .valuesAndError:
            success.map { "@escaping @Sendable (\(optionalSpelling($0))?, (any Error)?) -> Void" }
                ?? "@escaping @Sendable ((any Error)?) -> Void"
        case .values: "@escaping @Sendable (\(success!.trimmedDescription)) -> Void"
        }
    }

    /// What the generated body passes to the legacy method in place of its handler: `done`
    /// itself, or a closure that adapts the handler's arguments to `done`. The closure is
    /// `@Sendable`, so it is never isolated to the caller's actor: the SDK may call it on any
    /// thread.
    func argument(done: String) -> String {
        switch self {
        case .result, .valueOrError, .value, .error, .none:
            return done
        case .valuesAndError(let values):
            switch values.count {
            case 0: return "{ @Sendable error in \(done)(error) }"
            case 1: return "{ @Sendable value, error in \(done)(value, error) }"
            default:
                let names = values.indices.map { "value\($0 + 1)" }
                let unwrapped = zip(names, values).filter { optionalWrapped($0.1) != nil }.map { "let \($0.0)" }
                let tuple = "(" + names.joined(separator: ", ") + ")"
                var lines = ["{ @Sendable \(names.joined(separator: ", ")), error in"]
                lines.append("    if let error {")
                lines.append("        \(done)(nil, error)")
                if unwrapped.isEmpty {
                    lines.append("    } else {")
                    lines.append("        \(done)(\(tuple), nil)")
                } else {
                    lines.append("    } else if \(unwrapped.joined(separator: ", ")) {")
                    lines.append("        \(done)(\(tuple), nil)")
                    lines.append("    } else {")
                    lines.append("        \(done)(nil, nil)")
                }
                lines.append("    }")
                lines.append("}")
                return lines.joined(separator: "\n")
            }
        case .values(let values):
            let names = values.indices.map { "value\($0 + 1)" }
            return "{ @Sendable \(names.joined(separator: ", ")) in \(done)((\(names.joined(separator: ", ")))) }"
        }
    }
}

/// A `success:`/`failure:` pair of closures, bridged as one result: the first call of either
/// ends the wait.
struct ClosurePair {
    /// What the success closure passes, `nil` for `() -> Void`.
    let success: TypeSyntax?
    /// What the failure closure passes; `nil` when it is `Error`/`any Error` (untyped).
    let failure: TypeSyntax?

    var doneType: String {
        "@escaping @Sendable (Result<\(success?.trimmedDescription ?? "Void"), \(failure?.trimmedDescription ?? "any Error")>) -> Void"
    }
    func successArgument(done: String) -> String {
        success == nil ? "{ @Sendable in \(done)(.success(())) }" : "{ @Sendable value in \(done)(.success(value)) }"
    }
    func failureArgument(done: String) -> String { "{ @Sendable error in \(done)(.failure(error)) }" }
}

/// A parameter read as a closure, or why it is not one the macros can bridge.
enum HandlerReading {
    case handler(CallbackShape, escaping: Bool)
    /// The parameter is not a function at all.
    case notAFunction
    /// `@escaping SomeHandler`: a function type spelled through a typealias, which a macro cannot
    /// see through.
    case aliased(TypeSyntax)
    /// A function type that no shape takes; the message says which and why.
    case unsupported(String)

    var isClosure: Bool {
        if case .notAFunction = self { false } else { true }
    }
    var isEscaping: Bool {
        switch self {
        case .handler(_, let escaping): escaping
        case .aliased: true
        case .notAFunction, .unsupported: false
        }
    }
}

/// Strips attributes (`@escaping`, `@Sendable`, `@MainActor`), parentheses and one optional off
/// a parameter's type: the function type, whether it escapes, and its attributes' names.
func peelClosureType(_ type: TypeSyntax) -> (base: TypeSyntax, escaping: Bool, attributes: [String]) {
    var type = type
    var escaping = false
    var optional = false
    var attributes: [String] = []
    while true {
        if let attributed = type.as(AttributedTypeSyntax.self) {
            for case .attribute(let attribute) in attributed.attributes {
                let name = attribute.attributeName.trimmedDescription
                attributes.append(name)
                if name == "escaping" { escaping = true }
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
    // An optional function parameter is implicitly escaping.
    return (type, escaping || optional, attributes)
}

/// Reads a parameter's type as a completion handler.
func readHandler(_ type: TypeSyntax) -> HandlerReading {
    let (base, escapes, _) = peelClosureType(type)
    guard let function = base.as(FunctionTypeSyntax.self) else {
        // Only a function type can be `@escaping`: this one is spelled through a typealias.
        if escapes, type.as(AttributedTypeSyntax.self) != nil { return .aliased(base) }
        return .notAFunction
    }
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
    if parameters.contains(where: { $0.as(AttributedTypeSyntax.self)?.specifiers.isEmpty == false }) {
        return .unsupported(
            "its completion handler `\(function.trimmedDescription)` takes an inout or ownership-qualified parameter, which a bridge cannot pass on"
        )
    }
    if parameters.count == 1 {
        let only = parameters[0]
        if isVoid(only) { return .handler(.none, escaping: escapes) }
        if let (success, failure) = resultArguments(only) {
            return .handler(.result(success: success, failure: isError(failure) ? nil : failure), escaping: escapes)
        }
    }
    if parameters.isEmpty { return .handler(.none, escaping: escapes) }
    // A trailing optional error: the values before it are what the call returns.
    if let last = parameters.last, let error = optionalWrapped(last), isErrorLike(error) {
        let values = Array(parameters.dropLast())
        if isError(error) {
            if values.isEmpty { return .handler(.error, escaping: escapes) }
            if values.count == 1, let value = optionalWrapped(values[0]) {
                return .handler(.valueOrError(value: value), escaping: escapes)
            }
        }
        return .handler(.valuesAndError(values: values), escaping: escapes)
    }
    if parameters.count == 1 { return .handler(.value(parameters[0]), escaping: escapes) }
    return .handler(.values(parameters), escaping: escapes)
}

/// `Void` or `()`.
func isVoid(_ type: TypeSyntax) -> Bool {
    if let tuple = type.as(TupleTypeSyntax.self) { return tuple.elements.isEmpty }
    return ["Void", "Swift.Void"].contains(type.trimmedDescription)
}

/// `Error`, `any Error`, `Swift.Error`, `any Swift.Error`.
func isError(_ type: TypeSyntax) -> Bool {
    ["Error", "Swift.Error"].contains(existentialConstraint(type).trimmedDescription)
}

/// An error type by its name: `Error`, `NSError`, or a type whose name ends in `Error`
/// (`CKError`, `APIError`), as SDKs spell the error of an Objective-C-style handler.
func isErrorLike(_ type: TypeSyntax) -> Bool {
    let type = existentialConstraint(type)
    if isError(type) { return true }
    let name: String
    if let identifier = type.as(IdentifierTypeSyntax.self), identifier.genericArgumentClause == nil {
        name = identifier.name.text
    } else if let member = type.as(MemberTypeSyntax.self), member.genericArgumentClause == nil {
        name = member.name.text
    } else {
        return false
    }
    return name.hasSuffix("Error")
}

/// `P` of `any P` and `(P)`; the type itself otherwise.
private func existentialConstraint(_ type: TypeSyntax) -> TypeSyntax {
    var type = type
    if let tuple = type.as(TupleTypeSyntax.self), tuple.elements.count == 1, let only = tuple.elements.first {
        type = only.type
    }
    if let existential = type.as(SomeOrAnyTypeSyntax.self), existential.someOrAnySpecifier.tokenKind == .keyword(.any) {
        type = existential.constraint
    }
    return type
}

/// `T` of `T?` or `Optional<T>`.
func optionalWrapped(_ type: TypeSyntax) -> TypeSyntax? {
    if let optional = type.as(OptionalTypeSyntax.self) { return optional.wrappedType }
    if let optional = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return optional.wrappedType }
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

/// One type as it is, several as a tuple, none as `nil`.
private func tuple(_ types: [TypeSyntax]) -> TypeSyntax? {
    switch types.count {
    case 0: return nil
    case 1: return types[0].trimmed
    default: return TypeSyntax(stringLiteral: "(" + types.map(\.trimmedDescription).joined(separator: ", ") + ")")
    }
}

/// A type as it can be written before `?`: a function or `some`/`any` type in parentheses.
private func optionalSpelling(_ type: TypeSyntax) -> String {
    if type.is(FunctionTypeSyntax.self) || type.is(SomeOrAnyTypeSyntax.self) || type.is(CompositionTypeSyntax.self) {
        return "(\(type.trimmedDescription))"
    }
    return type.trimmedDescription
}
#endif
