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
        let placement = Placement(members: declaration)
        let timeout = node.argument(named: "timeout")
        let functions = declaration.memberBlock.members.compactMap { $0.decl.as(FunctionDeclSyntax.self) }
        // The async methods the type already declares, by name and argument labels.
        let asyncForms = Set(
            functions.filter { $0.signature.effectSpecifiers?.asyncSpecifier != nil }.map {
                Signature(function: $0).asyncKey(keeping: Signature(function: $0).parameters)
            })

        var overloads: [DeclSyntax] = []
        var notCandidates: [String] = []
        for function in functions {
            let signature = Signature(function: function)
            let isAsync = function.signature.effectSpecifiers?.asyncSpecifier != nil
            // On a protocol, `@Bridged(…)` on a requirement says how to bridge it (it reports its
            // own mistakes); on a type, `@Bridged` writes the overload itself.
            let configuration = isProtocol ? function.attributes.attribute(named: "Bridged") : nil
            let marked = ["Bridged", "BridgedCompletion", "NotBridged"].contains {
                function.attributes.contains(named: $0)
            }
            let hasClosure = signature.parameters.contains { readHandler($0.type).isClosure }
            if isAsync || (marked && configuration == nil)
                || (!hasClosure && HandlerChoice.suspectedAlias(signature) == nil)
            {
                notCandidates.append(signature.fullName)
                continue
            }
            func skip(_ why: String) {
                context.diagnose(
                    Diagnostic(
                        node: node,
                        message: BridgesMacroMessage.warning(
                            "skipped",
                            "@BridgedAll skipped '\(signature.fullName)': \(why) (mark it @NotBridged to silence this)"
                        ),
                        highlights: [Syntax(function.name)],
                        notes: [
                            Note(
                                node: Syntax(function.name),
                                message: BridgesNote(message: "'\(signature.fullName)' declared here"))
                        ]
                    ))
            }
            do {
                let overload = AsyncOverload(
                    signature: signature, placement: placement,
                    options: try BridgedOptions(configuration, timeout: timeout),
                    defaultAccess: defaultAccess, attribute: nil)
                let key = signature.asyncKey(keeping: try overload.keptParameters())
                if asyncForms.contains(key) {
                    skip(
                        "\(isProtocol ? "the protocol" : "the type") already declares its async form, '\(key)'; two would be an invalid redeclaration"
                    )
                    continue
                }
                overloads.append(try overload.make())
            } catch {
                if configuration == nil { skip(error.message.message) }
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
