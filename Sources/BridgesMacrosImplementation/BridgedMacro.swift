#if Macros
import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Bridged` on a completion-handler method or free function: adds its `async` overload.
public struct BridgedMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let function = declaration.as(FunctionDeclSyntax.self) else {
            context.diagnose(
                Diagnostic(
                    node: node,
                    message: BridgesMacroMessage.error(
                        "notAFunction",
                        "@Bridged applies to a method or function with a completion handler; on a protocol or type, use @BridgedAll to bridge every completion-handler method it declares"
                    )))
            return []
        }
        if let proto = context.lexicalContext.first?.as(ProtocolDeclSyntax.self) {
            guard proto.attributes.contains(named: "BridgedAll") else {
                // A peer in a protocol would be a requirement with a body, which Swift does not allow.
                context.diagnose(
                    Diagnostic(
                        node: node,
                        message: BridgesMacroMessage.error(
                            "protocolRequirement",
                            "@Bridged cannot add an async method to a protocol's requirements; put @BridgedAll on the protocol, which adds the async forms in an extension (@Bridged(…) on a requirement then says how to bridge that one)"
                        ),
                        fixIts: [
                            FixIt(
                                message: BridgesFixIt(message: "Remove '@Bridged'"),
                                changes: [.replace(oldNode: Syntax(node), newNode: Syntax(AttributeListSyntax([])))])
                        ]))
                return []
            }
            // A requirement of a @BridgedAll protocol: the attribute configures the overload
            // @BridgedAll writes in its extension. Its mistakes are reported here, at it.
            do {
                _ = try AsyncOverload(
                    signature: Signature(function: function), placement: Placement(members: proto),
                    options: try BridgedOptions(node), defaultAccess: nil, attribute: node
                ).make()
            } catch {
                context.diagnose(error.diagnostic(at: node))
            }
            return []
        }
        let options: BridgedOptions
        do {
            options = try BridgedOptions(node)
        } catch {
            context.diagnose(error.diagnostic(at: node))
            return []
        }
        let overload = AsyncOverload(
            signature: Signature(function: function),
            placement: Placement(lexicalContext: context.lexicalContext),
            options: options,
            defaultAccess: nil,
            attribute: node
        )
        do {
            return [try overload.make()]
        } catch {
            var refusal = error
            if refusal.message.id == "alreadyAsync" {
                // An async method: the user meant the other direction.
                let renamed = node.with(
                    \.attributeName, TypeSyntax(IdentifierTypeSyntax(name: .identifier("BridgedCompletion")))
                )
                .with(\.arguments, nil).with(\.leftParen, nil).with(\.rightParen, nil)
                refusal.fixIts.append(
                    FixIt(
                        message: BridgesFixIt(message: "Use '@BridgedCompletion' to write the completion-handler form"),
                        changes: [.replace(oldNode: Syntax(node), newNode: Syntax(renamed))]))
            }
            context.diagnose(refusal.diagnostic(at: node))
            return []
        }
    }
}

/// `@NotBridged`: marks a method `@BridgedAll` leaves alone without a warning. Adds nothing.
public struct NotBridgedMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] { [] }
}

#endif
