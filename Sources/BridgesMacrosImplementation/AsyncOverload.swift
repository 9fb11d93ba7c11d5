#if Macros
import SwiftDiagnostics
import SwiftSyntax

/// Writes the `async` overload of a completion-handler method through `withCallback`.
///
/// `func fetch(id: Int, completion: @escaping (Result<User, APIError>) -> Void) -> Request`
/// gets
/// ```swift
/// nonisolated(nonsending) func fetch(id: Int) async throws(CallbackFailure<APIError>) -> User {
///     try await withTypedCallback { (done: @escaping @Sendable (Result<User, APIError>) -> Void) in
///         let handle = self.fetch(id: id, completion: done)
///         Cancellation { handle.cancel() }
///     }
/// }
/// ```
/// A handler that is not one of `withCallback`'s shapes (`(Bool, Error?)`, several values, a
/// `success:`/`failure:` pair) is adapted to one in a `@Sendable` closure passed in its place;
/// the method's other escaping closures become `@Sendable` parameters of the overload.
struct AsyncOverload {
    let signature: Signature
    let placement: Placement
    let options: BridgedOptions
    /// Used when the declaration has no access modifier (a protocol requirement takes the
    /// protocol's).
    let defaultAccess: String?
    /// The attribute that asked for the overload, for fix-its that change its arguments.
    let attribute: AttributeSyntax?

    /// The parameters the overload keeps: all but the completion handler (or the pair).
    func keptParameters() throws(Refusal) -> [FunctionParameterSyntax] {
        let choice = try HandlerChoice.choose(signature, options: options, attribute: attribute)
        return signature.parameters.enumerated().filter { !choice.indices.contains($0.offset) }.map(\.element)
    }

    /// The overload, or why there is none.
    func make() throws(Refusal) -> DeclSyntax {
        let function = signature.function
        if function.signature.effectSpecifiers?.asyncSpecifier != nil {
            throw Refusal(
                message: .error(
                    "alreadyAsync",
                    "'\(signature.fullName)' is already async; @Bridged writes the async form of a completion-handler method. For the completion-handler form of an async method, use @BridgedCompletion"
                ))
        }
        let choice = try HandlerChoice.choose(signature, options: options, attribute: attribute)
        let parameters = signature.parameters
        let kept = parameters.enumerated().filter { !choice.indices.contains($0.offset) }.map(\.element)
        if let refusal = Signature.unpassable(kept) { throw refusal }

        let names = Set(parameters.map { ($0.secondName ?? $0.firstName).text })
        let done = names.contains("done") ? "bridgedDone" : "done"
        let handle = names.contains("handle") ? "bridgedHandle" : "handle"

        let throwsSync = function.signature.effectSpecifiers?.throwsClause != nil
        // Typed throws where the failure is concrete: `withTypedCallback` keeps `E` as
        // `CallbackFailure<E>.failure`. Its body cannot throw, so a method that also throws
        // synchronously is bridged untyped.
        var typedFailure: TypeSyntax? = nil
        let success: TypeSyntax?
        let doneType: String
        switch choice {
        case .single(_, let shape):
            if case .result(_, let failure?) = shape, !throwsSync { typedFailure = failure }
            success = shape.success
            doneType = shape.doneType
        case .pair(_, _, let pair):
            if let failure = pair.failure, !throwsSync { typedFailure = failure }
            success = pair.success
            doneType = pair.doneType
        }

        // The call: the handler (or the pair) replaced, every other parameter passed on.
        var arguments: [String] = []
        var passedOn: [String] = []
        for (index, parameter) in parameters.enumerated() {
            let value: String
            switch choice {
            case .single(let handlerIndex, let shape) where index == handlerIndex:
                value = shape.argument(done: done)
            case .pair(let successIndex, _, let pair) where index == successIndex:
                value = pair.successArgument(done: done)
            case .pair(_, let failureIndex, let pair) where index == failureIndex:
                value = pair.failureArgument(done: done)
            default:
                value = (parameter.secondName ?? parameter.firstName).text
                if passedOnType(parameter.type).trimmedDescription != parameter.type.trimmedDescription {
                    passedOn.append(parameter.label)
                }
            }
            arguments.append(
                parameter.firstName.tokenKind == .wildcard ? value : "\(parameter.firstName.text): \(value)")
        }
        let callee = (placement.isMember ? "self." : "") + function.name.text
        var call = (throwsSync ? "try " : "") + callee + "(" + arguments.joined(separator: ", ") + ")"
        // The one error the macro cannot foresee: a global actor the type inherits from a
        // superclass or a protocol makes the legacy method isolated, and this line then fails.
        let nonsending = !placement.isolatedContext && !signature.hasGlobalActor && !signature.hasNonisolated
        if nonsending && placement.mayInferIsolation {
            call += "  // isolated through a superclass or protocol? write its global actor on the method or type"
        }

        let returned = function.signature.returnClause?.type
        var body: [String]
        var cancels = true
        let returnsNothing = returned.map(isVoid) ?? true
        if returnsNothing || options.returnValue == .ignore {
            if returnsNothing && options.returnValue == .resumeAndCancel {
                throw Refusal(
                    message: .error(
                        "nothingToResume",
                        "'\(signature.fullName)' returns nothing, so `returnValue: .resumeAndCancel` has nothing to resume; remove it"
                    ))
            }
            cancels = false
            body = [returnsNothing ? call : "_ = \(call)"]
        } else if let returned {
            let spelled = returned.trimmedDescription
            let plain = optionalWrapped(returned)?.trimmedDescription ?? spelled
            if options.returnValue == .cancel, ["Cancellation", "Bridges.Cancellation"].contains(spelled) {
                body = ["return \(call)"]
            } else if options.returnValue == .cancel,
                Self.values.contains(plain.hasPrefix("Swift.") ? String(plain.dropFirst(6)) : plain)
            {
                throw Refusal(
                    message: .error(
                        "returnsAValue",
                        "'\(signature.fullName)' returns '\(spelled)', which has no `cancel()` to call when the awaiting task is cancelled; write `returnValue: .ignore` to leave it (the call then cannot be cancelled), or return a handle with `cancel()`"
                    ),
                    fixIts: attribute.map {
                        [
                            FixIt(
                                message: BridgesFixIt(
                                    message: "Ignore the returned value (the call cannot be cancelled)"),
                                changes: [
                                    .replace(
                                        oldNode: Syntax($0),
                                        newNode: Syntax($0.adding(argument: "returnValue", value: ".ignore")))
                                ])
                        ]
                    } ?? [],
                    node: Syntax(returned))
            } else {
                // Without `return`, the body is LegacyCallBuilder's: a handle without `cancel()`
                // is then reported as such ("has no member 'cancel'"), not as a `return` in a
                // result builder.
                let optional = optionalWrapped(returned) != nil ? "?" : ""
                body = ["let \(handle) = \(call)"]
                if options.returnValue == .resumeAndCancel { body.append("\(handle)\(optional).resume()") }
                body.append("Cancellation { \(handle)\(optional).cancel() }")
            }
        } else {
            preconditionFailure("Internal inconsistency: a return type that is neither absent nor present")
        }

        let bridge = typedFailure == nil ? "withCallback" : "withTypedCallback"
        let timeoutArgument = options.timeout.map { "(timeout: \($0))" } ?? ""
        let effects =
            typedFailure.map { "async throws(CallbackFailure<\($0.trimmedDescription)>)" } ?? "async throws"
        let result = success.map { " -> \($0.trimmedDescription)" } ?? ""

        // The overload runs in its caller's isolation, so a `@MainActor` caller awaits it on a
        // non-Sendable object without sending the object anywhere; an actor's or a global
        // actor's methods stay isolated to it instead.
        let modifiers =
            (nonsending ? "nonisolated(nonsending) " : "")
            + signature.modifiers(defaultAccess: defaultAccess, async: true)

        let declared = kept.map { $0.with(\.type, passedOnType($0.type)) }
        let text = """
            \(doc(bridge: bridge, choice: choice, success: success, cancels: cancels, passedOn: passedOn, typedFailure: typedFailure))
            \(signature.attributes)\(modifiers)func \(function.name.text)\(signature.generics)(\(Signature.declare(declared))) \(effects)\(result)\(signature.whereClause) {
                try await \(bridge)\(timeoutArgument) { (\(done): \(doneType)) in
                    \(body.joined(separator: "\n").split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\n        "))
                }
            }
            """
        return DeclSyntax(stringLiteral: text)
    }

    /// Return types that are values, not handles: an id, a flag. Their `cancel()` cannot exist.
    static let values: Set<String> = [
        "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Bool", "String",
        "Double", "Float", "CGFloat", "TimeInterval", "UUID", "Date", "Data", "URL", "Character", "Substring",
    ]

    private func doc(
        bridge: String, choice: HandlerChoice, success: TypeSyntax?, cancels: Bool, passedOn: [String],
        typedFailure: TypeSyntax?
    ) -> String {
        let handler: String
        var missing = false
        switch choice {
        case .single(let index, let shape):
            handler = "the completion handler"
            if case .valuesAndError(let values) = shape { missing = values.contains { optionalWrapped($0) != nil } }
            _ = index
        case .pair(let successIndex, let failureIndex, _):
            let parameters = signature.parameters
            handler = "`\(parameters[successIndex].label)` or `\(parameters[failureIndex].label)`"
        }
        var doc = [
            "/// The `async` form of `\(signature.fullName)`, written by `@Bridged` through `\(bridge)`.",
            "///",
            success == nil
                ? "/// - Returns: when \(handler) is first called; a second call is ignored and"
                : "/// - Returns: what \(handler) passed, the first time it was called; a second",
            success == nil
                ? "///   reported through `Diagnostics`."
                : "///   call is ignored and reported through `Diagnostics`.",
            "/// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,",
            "///   instead of suspending forever;"
                + (cancels
                    ? " `CancellationError` when the awaiting task is cancelled (the call is cancelled too);"
                    : " `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);"),
        ]
        if missing {
            doc.append("///   `BridgeError.missingValueAndError` if it passes neither an error nor every value;")
        }
        if let timeout = options.timeout {
            doc.append("///   `BridgeError.timedOut` after `\(timeout)`, which cancels the call too;")
        }
        if let typedFailure {
            doc.append(
                "///   all of them as `CallbackFailure<\(typedFailure.trimmedDescription)>`: `.failure` is the API's own error."
            )
        } else {
            doc.append("///   and the API's own error as it is.")
        }
        if !passedOn.isEmpty {
            doc.append(
                "/// - Note: \(passedOn.map { "`\($0)`" }.joined(separator: ", ")) \(passedOn.count == 1 ? "is" : "are") `@Sendable` here: the legacy method keeps \(passedOn.count == 1 ? "it" : "them") and may call \(passedOn.count == 1 ? "it" : "them") on any thread."
            )
        }
        return doc.joined(separator: "\n")
    }
}

/// The type of a closure the overload passes on to the legacy method: `@Sendable` when it
/// escapes, since the legacy method may call it on any thread, unless it already is `@Sendable`
/// or isolated to a global actor. A closure a `@MainActor` caller writes for a parameter that is
/// not `@Sendable` is isolated to the main actor, and an SDK thread calling it traps.
func passedOnType(_ type: TypeSyntax) -> TypeSyntax {
    let (base, escaping, attributes) = peelClosureType(type)
    guard escaping, base.is(FunctionTypeSyntax.self),
        !attributes.contains("Sendable"), !attributes.contains(where: { $0.hasSuffix("Actor") })
    else { return type }
    return TypeSyntax(stringLiteral: addingSendable(type)).with(\.leadingTrivia, type.leadingTrivia)
        .with(\.trailingTrivia, type.trailingTrivia)
}

private func addingSendable(_ type: TypeSyntax) -> String {
    if let attributed = type.as(AttributedTypeSyntax.self) {
        let leading = (attributed.specifiers.map(\.trimmedDescription) + [attributed.attributes.trimmedDescription])
            .filter { !$0.isEmpty }.joined(separator: " ")
        return "\(leading) @Sendable \(attributed.baseType.trimmedDescription)"
    }
    if let optional = type.as(OptionalTypeSyntax.self) {
        return "(\(addingSendable(unparenthesized(optional.wrappedType))))?"
    }
    if let optional = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
        return "(\(addingSendable(unparenthesized(optional.wrappedType))))!"
    }
    if let tuple = type.as(TupleTypeSyntax.self), tuple.elements.count == 1, let only = tuple.elements.first {
        return addingSendable(only.type)
    }
    return "@Sendable \(type.trimmedDescription)"
}

private func unparenthesized(_ type: TypeSyntax) -> TypeSyntax {
    if let tuple = type.as(TupleTypeSyntax.self), tuple.elements.count == 1, let only = tuple.elements.first,
        only.firstName == nil
    {
        return unparenthesized(only.type)
    }
    return type
}
#endif
