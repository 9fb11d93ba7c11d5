#if Macros
import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@BridgedAll` on a protocol, class, struct, enum or actor: an extension with the `async`
/// overload of every completion-handler method the type declares, and a warning at the
/// attribute for each one it had to skip.
///
/// A method is a candidate when its last parameter is a function type. Candidates the macro
/// cannot bridge are skipped with a warning that says why (silence it with `@NotBridged`);
/// methods that have no completion handler, are already `async`, or carry `@Bridged`,
/// `@BridgedCompletion` or `@NotBridged` are not candidates, and a remark lists them.
public struct BridgedAllMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        let isProtocol = declaration.is(ProtocolDeclSyntax.self)
        let isActor = declaration.is(ActorDeclSyntax.self)
        // A protocol's requirements have the protocol's access level; an extension's members
        // would default to internal, so the protocol's level is written on each.
        var defaultAccess: String? = nil
        if isProtocol {
            for modifier in declaration.modifiers {
                switch modifier.name.text {
                case "public", "package", "fileprivate": defaultAccess = modifier.name.text
                case "private": defaultAccess = "fileprivate"  // private at file scope
                default: break
                }
            }
        }
        let placement = Placement(
            isMember: true, isolatedContext: isActor || declaration.attributes.hasGlobalActor)
        let timeout = node.argument(named: "timeout")

        var overloads: [DeclSyntax] = []
        var notCandidates: [String] = []
        for member in declaration.memberBlock.members {
            guard let function = member.decl.as(FunctionDeclSyntax.self) else { continue }
            let signature = Signature(function: function)
            let marked = ["Bridged", "BridgedCompletion", "NotBridged"].contains {
                function.attributes.contains(named: $0)
            }
            let isAsync = function.signature.effectSpecifiers?.asyncSpecifier != nil
            let handler = signature.parameters.last.map { readHandler($0.type) } ?? .notAHandler
            if marked || isAsync {
                notCandidates.append(signature.fullName)
                continue
            }
            if case .notAHandler = handler {
                notCandidates.append(signature.fullName)
                continue
            }
            let overload = AsyncOverload(
                signature: signature, placement: placement, timeout: timeout, defaultAccess: defaultAccess)
            do {
                overloads.append(try overload.make())
            } catch {
                context.diagnose(
                    Diagnostic(
                        node: node,
                        message: BridgesMacroMessage.warning(
                            "skipped",
                            "@BridgedAll skipped '\(signature.fullName)': \(error.message.message) (mark it @NotBridged to silence this)"
                        ),
                        highlights: [Syntax(function.name)],
                        notes: [
                            Note(
                                node: Syntax(function.name),
                                message: BridgesNote(message: "'\(signature.fullName)' declared here"))
                        ]
                    ))
            }
        }
        if !notCandidates.isEmpty {
            context.diagnose(
                Diagnostic(
                    node: node,
                    message: BridgesMacroMessage.remark(
                        "notCandidates",
                        "@BridgedAll left alone, having no completion handler to bridge or being marked: "
                            + notCandidates.map { "'\($0)'" }.joined(separator: ", ")
                    )))
        }
        guard !overloads.isEmpty else { return [] }
        let members = overloads.map { $0.description }.joined(separator: "\n\n")
        let extensionDecl: DeclSyntax = """
            extension \(type.trimmed) {
            \(raw: members)
            }
            """
        return [extensionDecl.cast(ExtensionDeclSyntax.self)]
    }
}

/// The text of a note.
struct BridgesNote: NoteMessage {
    let message: String
    var noteID: MessageID { MessageID(domain: "BridgesMacros", id: "note") }
}
#endif
