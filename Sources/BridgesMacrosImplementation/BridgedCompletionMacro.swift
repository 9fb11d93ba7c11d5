#if Macros
import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@BridgedCompletion(on:whenCancelled:)` on an `async` method: adds its completion-handler
/// overload through `withCompletion`, for callers not migrated yet.
///
/// `func load(id: Int) async throws -> User` gets
/// ```swift
/// @discardableResult
/// func load(id: Int, completion: @escaping @Sendable (Result<User, any Error>) -> Void) -> Cancellation {
///     withCompletion(on: .current, completion) { try await self.load(id: id) }
/// }
/// ```
/// A method that returns nothing gets an `(Error?) -> Void` handler. With `on: .mainActor` the
/// handler is `@MainActor`.
public struct BridgedCompletionMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        do {
            return [try make(node: node, declaration: declaration, context: context)]
        } catch {
            context.diagnose(error.diagnostic(at: node))
            return []
        }
    }

    static func make(
        node: AttributeSyntax, declaration: some DeclSyntaxProtocol, context: some MacroExpansionContext
    ) throws(Refusal) -> DeclSyntax {
        guard let function = declaration.as(FunctionDeclSyntax.self) else {
            throw Refusal(
                message: .error("notAFunction", "@BridgedCompletion applies to an async method or function"))
        }
        let signature = Signature(function: function)
        if context.lexicalContext.first?.is(ProtocolDeclSyntax.self) == true {
            throw Refusal(
                message: .error(
                    "protocolRequirement",
                    "@BridgedCompletion cannot add a method with a body to a protocol's requirements; write the completion-handler form in an extension of the protocol, or put @BridgedCompletion on the conforming type's method"
                ))
        }
        guard function.signature.effectSpecifiers?.asyncSpecifier != nil else {
            var fixIts: [FixIt] = []
            if let last = signature.parameters.last, case .handler = readHandler(last.type) {
                // A completion-handler method: the user meant the other direction.
                let renamed = node.with(\.attributeName, TypeSyntax(IdentifierTypeSyntax(name: .identifier("Bridged"))))
                    .with(\.arguments, nil).with(\.leftParen, nil).with(\.rightParen, nil)
                fixIts.append(
                    FixIt(
                        message: BridgesFixIt(message: "Use '@Bridged' to write the async form"),
                        changes: [.replace(oldNode: Syntax(node), newNode: Syntax(renamed))]))
            }
            throw Refusal(
                message: .error(
                    "notAsync",
                    "'\(signature.fullName)' is not async; @BridgedCompletion writes the completion-handler form of an async method. For the async form of a completion-handler method, use @Bridged"
                ),
                fixIts: fixIts)
        }
        let parameters = signature.parameters
        if let refusal = Signature.unpassable(parameters) { throw refusal }

        let names = Set(parameters.map { ($0.secondName ?? $0.firstName).text })
        let label = names.contains("completion") ? "completionHandler" : "completion"

        let returned = function.signature.returnClause?.type
        let value = returned.flatMap { isVoid($0) ? nil : $0.trimmedDescription }
        let delivery = node.argument(named: "on")
        let whenCancelled = node.argument(named: "whenCancelled")
        let onMainActor = delivery.map { $0 == ".mainActor" || $0.hasSuffix("Delivery.mainActor") } ?? false
        let isolation = onMainActor ? "@MainActor" : "@Sendable"
        let handlerType = value.map { "(Result<\($0), any Error>) -> Void" } ?? "((any Error)?) -> Void"

        let throwing = function.signature.effectSpecifiers?.throwsClause != nil
        let call =
            (throwing ? "try " : "") + "await "
            + (Placement(lexicalContext: context.lexicalContext).isMember ? "self." : "")
            + function.name.text + "(" + Signature.arguments(parameters).joined(separator: ", ") + ")"
        var bridgeArguments: [String] = []
        if let delivery { bridgeArguments.append("on: \(delivery)") }
        if let whenCancelled { bridgeArguments.append("whenCancelled: \(whenCancelled)") }
        bridgeArguments.append(label)

        let deliverySentence =
            onMainActor
            ? "on the main actor"
            : delivery.map { "where `\($0)` says" } ?? "on the thread that finished the work, or the one that cancelled"
        let cancelledSentence =
            whenCancelled == ".doNotCall"
            ? "`cancel()` on the returned token cancels the work, and the handler is then not called at all."
            : "`cancel()` on the returned token cancels the work and calls the handler with `CancellationError` at once."
        let doc = """
            /// The completion-handler form of `\(signature.fullName)`, written by `@BridgedCompletion`
            /// through `withCompletion`, for callers not migrated to `async` yet.
            ///
            /// `\(label)` is called exactly once, \(deliverySentence), with what the work returned or threw.
            /// \(cancelledSentence)
            """
        // The value crosses from the work's task to the handler's thread, so Swift 6 requires it
        // to be `Sendable`; the compiler's error then lands on this line, which says why.
        let sendableNote =
            value.map {
                AsyncOverload.values.contains($0)
                    ? "" : "  // '\($0)' crosses to the handler's thread: it must be Sendable"
            }
            ?? ""
        var parametersText = Signature.declare(parameters)
        parametersText += (parametersText.isEmpty ? "" : ", ") + "\(label): @escaping \(isolation) \(handlerType)"

        let text = """
            \(doc)
            @discardableResult
            \(signature.attributes)\(signature.modifiers(defaultAccess: nil, async: false))func \(function.name.text)\(signature.generics)(\(parametersText)) -> Cancellation\(signature.whereClause) {
                withCompletion(\(bridgeArguments.joined(separator: ", "))) {\(sendableNote)
                    \(call)
                }
            }
            """
        return DeclSyntax(stringLiteral: text)
    }
}
#endif
