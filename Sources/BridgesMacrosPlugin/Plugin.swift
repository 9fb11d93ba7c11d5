#if Macros
import BridgesMacrosImplementation
import SwiftCompilerPlugin
import SwiftSyntax
import SwiftSyntaxMacros

/// The compiler plugin: the macros `BridgesMacros` declares, by implementation type.
///
/// The compiler asks for `BridgesMacrosPlugin.<Type>`, so each macro is a type of this module
/// that forwards to `BridgesMacrosImplementation`, the library the expansion tests link.
@main
struct BridgesMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        BridgedMacro.self, BridgedAllMacro.self, BridgedCompletionMacro.self, NotBridgedMacro.self,
    ]
}

struct BridgedMacro: PeerMacro {
    static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try BridgesMacrosImplementation.BridgedMacro.expansion(of: node, providingPeersOf: declaration, in: context)
    }
}

struct BridgedAllMacro: ExtensionMacro {
    static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        try BridgesMacrosImplementation.BridgedAllMacro.expansion(
            of: node, attachedTo: declaration, providingExtensionsOf: type, conformingTo: protocols, in: context)
    }
}

struct BridgedCompletionMacro: PeerMacro {
    static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        try BridgesMacrosImplementation.BridgedCompletionMacro.expansion(
            of: node, providingPeersOf: declaration, in: context)
    }
}

struct NotBridgedMacro: PeerMacro {
    static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] { [] }
}
#else
/// Without the `Macros` trait the plugin is an empty program: nothing uses it and swift-syntax is
/// not fetched.
@main
enum BridgesMacrosPlugin {
    static func main() {}
}
#endif
