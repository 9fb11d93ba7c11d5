#if Macros
import SwiftSyntax

/// Writes the `async` overload of a completion-handler method through `withCallback`.
///
/// `func fetch(id: Int, completion: @escaping (Result<User, APIError>) -> Void) -> Request`
/// gets
/// ```swift
/// nonisolated(nonsending) func fetch(id: Int) async throws(CallbackFailure<APIError>) -> User {
///     try await withTypedCallback { (done: @escaping @Sendable (Result<User, APIError>) -> Void) in
///         let handle = self.fetch(id: id, completion: done)
///         return Cancellation { handle.cancel() }
///     }
/// }
/// ```
struct AsyncOverload {
    let signature: Signature
    let placement: Placement
    /// The attribute's `timeout:` argument, as written.
    let timeout: String?
    /// Used when the declaration has no access modifier (a protocol requirement takes the
    /// protocol's).
    let defaultAccess: String?

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
        guard let last = signature.parameters.last else {
            throw Refusal(
                message: .error(
                    "noHandler",
                    "'\(signature.fullName)' has no parameters, so no completion handler to bridge; @Bridged needs a method whose last parameter is its completion handler, such as `completion: @escaping (Result<Value, Error>) -> Void`"
                ))
        }
        let shape: CallbackShape
        switch readHandler(last.type) {
        case .notAHandler:
            throw Refusal(
                message: .error(
                    "noHandler",
                    "the last parameter of '\(signature.fullName)', '\(last.firstName.text): \(last.type.trimmedDescription)', is not a completion handler; @Bridged needs the completion handler last, such as `completion: @escaping (Result<Value, Error>) -> Void`"
                ))
        case .unsupported(let why):
            throw Refusal(message: .error("unsupportedHandler", "'\(signature.fullName)' cannot be bridged: \(why)"))
        case .handler(let found, let escaping):
            guard escaping else {
                // `withCallback` hands out an escaping `done`; a non-escaping parameter could not
                // take it, and an API that calls back later must declare it escaping anyway.
                let escapingType = last.type.with(\.leadingTrivia, [])
                let fixed = TypeSyntax("@escaping \(escapingType)")
                throw Refusal(
                    message: .error(
                        "nonEscapingHandler",
                        "the completion handler '\(last.firstName.text)' of '\(signature.fullName)' is not @escaping; an API that calls back later keeps its handler, so declare it `@escaping`"
                    ),
                    fixIts: [
                        .replace(
                            message: BridgesFixIt(message: "Insert '@escaping '"), oldNode: last.type, newNode: fixed)
                    ],
                    node: Syntax(last.type))
            }
            shape = found
        }
        let kept = Array(signature.parameters.dropLast())
        if let refusal = Signature.unpassable(kept) { throw refusal }

        let names = Set(signature.parameters.map { ($0.secondName ?? $0.firstName).text })
        let done = names.contains("done") ? "bridgedDone" : "done"
        let handle = names.contains("handle") ? "bridgedHandle" : "handle"

        let throwsSync = function.signature.effectSpecifiers?.throwsClause != nil
        // Typed throws where the failure is concrete: `withTypedCallback` keeps `E` as
        // `CallbackFailure<E>.failure`. Its body cannot throw, so a method that also throws
        // synchronously is bridged untyped.
        var typedFailure: TypeSyntax? = nil
        if case .result(_, let failure?) = shape, !throwsSync { typedFailure = failure }

        var arguments = Signature.arguments(kept)
        arguments.append(last.firstName.tokenKind == .wildcard ? done : "\(last.firstName.text): \(done)")
        let callee = (placement.isMember ? "self." : "") + function.name.text
        let call = (throwsSync ? "try " : "") + callee + "(" + arguments.joined(separator: ", ") + ")"

        let returned = function.signature.returnClause?.type
        let body: String
        var cancels = true
        if let returned, !isVoid(returned) {
            if returned.trimmedDescription == "Cancellation" || returned.trimmedDescription == "Bridges.Cancellation" {
                body = "return \(call)"
            } else if optionalWrapped(returned) != nil {
                body = "let \(handle) = \(call)\nreturn Cancellation { \(handle)?.cancel() }"
            } else {
                body = "let \(handle) = \(call)\nreturn Cancellation { \(handle).cancel() }"
            }
        } else {
            cancels = false
            body = call
        }

        let bridge = typedFailure == nil ? "withCallback" : "withTypedCallback"
        let timeoutArgument = timeout.map { "(timeout: \($0))" } ?? ""
        let effects =
            typedFailure.map { "async throws(CallbackFailure<\($0.trimmedDescription)>)" } ?? "async throws"
        let result = shape.success.map { " -> \($0.trimmedDescription)" } ?? ""

        // The overload runs in its caller's isolation, so a `@MainActor` caller awaits it on a
        // non-Sendable object without sending the object anywhere; an actor's or a global
        // actor's methods stay isolated to it instead.
        let nonsending =
            !placement.isolatedContext && !signature.hasGlobalActor && !signature.hasNonisolated
            ? "nonisolated(nonsending) " : ""
        let modifiers = nonsending + signature.modifiers(defaultAccess: defaultAccess, async: true)

        var doc = [
            "/// The `async` form of `\(signature.fullName)`, written by `@Bridged` through `\(bridge)`.",
            "///",
            shape.success == nil
                ? "/// - Returns: when the completion handler is first called; a second call is ignored and"
                : "/// - Returns: what the completion handler passed, the first time it was called; a second",
            shape.success == nil
                ? "///   reported through `Diagnostics`."
                : "///   call is ignored and reported through `Diagnostics`.",
            "/// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,",
            "///   instead of suspending forever;"
                + (cancels
                    ? " `CancellationError` when the awaiting task is cancelled (the call is cancelled too);"
                    : " `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);"),
        ]
        if let timeout { doc.append("///   `BridgeError.timedOut` after `\(timeout)`, which cancels the call too;") }
        if let typedFailure {
            doc.append(
                "///   all of them as `CallbackFailure<\(typedFailure.trimmedDescription)>`: `.failure` is the API's own error."
            )
        } else {
            doc.append("///   and the API's own error as it is.")
        }

        let text = """
            \(doc.joined(separator: "\n"))
            \(signature.attributes)\(modifiers)func \(function.name.text)\(signature.generics)(\(Signature.declare(kept))) \(effects)\(result)\(signature.whereClause) {
                try await \(bridge)\(timeoutArgument) { (\(done): \(shape.doneType)) in
                    \(body.split(separator: "\n").joined(separator: "\n        "))
                }
            }
            """
        return DeclSyntax(stringLiteral: text)
    }
}
#endif
