#if Macros
import SwiftDiagnostics
import SwiftSyntax

/// A message of the Bridges macros, at the attribute or the declaration it names.
struct BridgesMacroMessage: DiagnosticMessage {
    let message: String
    let id: String
    let severity: DiagnosticSeverity

    var diagnosticID: MessageID { MessageID(domain: "BridgesMacros", id: id) }

    static func error(_ id: String, _ message: String) -> Self { Self(message: message, id: id, severity: .error) }
    static func warning(_ id: String, _ message: String) -> Self { Self(message: message, id: id, severity: .warning) }
    static func remark(_ id: String, _ message: String) -> Self { Self(message: message, id: id, severity: .remark) }
}

/// The text of a fix-it.
struct BridgesFixIt: FixItMessage {
    let message: String
    var fixItID: MessageID { MessageID(domain: "BridgesMacros", id: message) }
}

/// Why a declaration cannot be bridged: a message, and a fix-it where one exists.
struct Refusal: Error {
    let message: BridgesMacroMessage
    var fixIts: [FixIt] = []
    /// Where the fix-it or the message points, when not at the attribute.
    var node: Syntax?

    /// The diagnostic at the attribute, highlighting the part of the declaration it is about.
    func diagnostic(at attribute: AttributeSyntax) -> Diagnostic {
        Diagnostic(node: attribute, message: message, highlights: node.map { [$0] }, fixIts: fixIts)
    }
}
#endif
