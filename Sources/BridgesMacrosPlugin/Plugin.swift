#if Macros
import SwiftCompilerPlugin
import BridgesMacrosImplementation
import SwiftSyntaxMacros

/// The compiler plugin: the macros `BridgesMacros` declares, by implementation type.
@main
struct BridgesMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        BridgedMacro.self, BridgedAllMacro.self, BridgedCompletionMacro.self, NotBridgedMacro.self,
    ]
}
#else
/// Without the `Macros` trait the plugin is an empty program: nothing uses it and swift-syntax is
/// not fetched.
@main
enum BridgesMacrosPlugin {
    static func main() {}
}
#endif
