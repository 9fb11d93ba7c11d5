#if Macros
import SwiftSyntax

/// What the generated overload copies from the declaration it is written for: attributes
/// (availability, global actor), modifiers (access level, `static`, `mutating`), generic
/// parameters and `where` clause, and the parameters it keeps.
struct Signature {
    let function: FunctionDeclSyntax

    /// Attributes that describe the original only (the macros' own, `@objc`, `@discardableResult`)
    /// are not copied; every other attribute is, `@available` and global actors included.
    static let dropped: Set<String> = [
        "Bridged", "BridgedAll", "BridgedCompletion", "NotBridged", "objc", "nonobjc", "discardableResult",
        "IBAction", "IBSegueAction", "concurrent",
    ]

    /// The kept attributes, each followed by a newline.
    var attributes: String {
        function.attributes.compactMap { element -> String? in
            guard case .attribute(let attribute) = element else { return element.trimmedDescription + "\n" }
            let name = attribute.attributeName.trimmedDescription
            return Self.dropped.contains(name) ? nil : attribute.trimmedDescription + "\n"
        }.joined()
    }

    /// True when the declaration names a global actor (`@MainActor`, `@SomeActor`).
    var hasGlobalActor: Bool { function.attributes.hasGlobalActor }

    /// Kept modifiers, each followed by a space: `open` becomes `public` (the overload is not an
    /// override point), `override`, `dynamic`, `optional`, `required` and `convenience` are not
    /// kept. `defaultAccess` is added when the declaration has no access modifier of its own.
    func modifiers(defaultAccess: String?, async: Bool) -> String {
        var words: [String] = []
        var hasAccess = false
        for modifier in function.modifiers {
            let name = modifier.name.text
            switch name {
            case "override", "dynamic", "optional", "required", "convenience", "final": continue
            case "open":
                words.append("public")
                hasAccess = true
            case "public", "package", "internal", "fileprivate", "private":
                hasAccess = true
                words.append(modifier.trimmedDescription)
            case "nonisolated":
                // An async overload runs in its caller's isolation (see `nonsending`); a
                // synchronous one stays plain `nonisolated`.
                words.append(async ? "nonisolated(nonsending)" : "nonisolated")
            default: words.append(modifier.trimmedDescription)
            }
        }
        if !hasAccess, let defaultAccess { words.insert(defaultAccess, at: 0) }
        return words.map { $0 + " " }.joined()
    }

    var hasNonisolated: Bool { function.modifiers.contains { $0.name.text == "nonisolated" } }

    var generics: String { function.genericParameterClause?.trimmedDescription ?? "" }
    var whereClause: String { function.genericWhereClause.map { " " + $0.trimmedDescription } ?? "" }

    var parameters: [FunctionParameterSyntax] { Array(function.signature.parameterClause.parameters) }

    /// The name as DocC and messages spell it: `fetch(id:completion:)`.
    var fullName: String {
        function.name.text + "(" + parameters.map { ($0.firstName.text) + ":" }.joined() + ")"
    }

    /// The async form's name as DocC spells it, `fetch(id:)`: the key under which two methods
    /// would be an invalid redeclaration (their types aside).
    func asyncKey(keeping parameters: [FunctionParameterSyntax]) -> String {
        function.name.text + "(" + parameters.map { $0.firstName.text + ":" }.joined() + ")"
    }

    /// The parameters as declared, for the new signature (defaults kept, trailing comma fixed).
    static func declare(_ parameters: [FunctionParameterSyntax]) -> String {
        parameters.map { $0.with(\.trailingComma, nil).trimmedDescription }.joined(separator: ", ")
    }

    /// The arguments that pass `parameters` on as they are, `id: id`, `_ x` as `x`.
    static func arguments(_ parameters: [FunctionParameterSyntax]) -> [String] {
        parameters.map { parameter in
            let name = (parameter.secondName ?? parameter.firstName).text
            return parameter.firstName.tokenKind == .wildcard ? name : "\(parameter.firstName.text): \(name)"
        }
    }

    /// A parameter the overload cannot pass on as written: `inout`, variadic or `@autoclosure`.
    static func unpassable(_ parameters: [FunctionParameterSyntax]) -> Refusal? {
        for parameter in parameters {
            let name = (parameter.secondName ?? parameter.firstName).text
            if parameter.ellipsis != nil {
                return Refusal(
                    message: .error(
                        "variadicParameter",
                        "parameter '\(name)' is variadic, and a variadic argument cannot be passed on; take an array (`[\(parameter.type.trimmedDescription)]`) instead"
                    ), node: Syntax(parameter))
            }
            if let attributed = parameter.type.as(AttributedTypeSyntax.self) {
                if attributed.specifiers.contains(where: { $0.trimmedDescription == "inout" }) {
                    return Refusal(
                        message: .error(
                            "inoutParameter",
                            "parameter '\(name)' is inout, and an async overload cannot write it back when the call completes; return the new value in the completion handler instead"
                        ), node: Syntax(parameter))
                }
                if attributed.attributes.contains(where: { $0.trimmedDescription == "@autoclosure" }) {
                    return Refusal(
                        message: .error(
                            "autoclosureParameter",
                            "parameter '\(name)' is an @autoclosure, which cannot be passed on unevaluated; take a closure instead"
                        ), node: Syntax(parameter))
                }
            }
        }
        return nil
    }
}

extension AttributeListSyntax {
    /// A global actor attribute: `@MainActor` or any attribute named `…Actor`.
    var hasGlobalActor: Bool {
        contains { element in
            guard case .attribute(let attribute) = element else { return false }
            return attribute.attributeName.trimmedDescription.hasSuffix("Actor")
        }
    }

    func contains(named name: String) -> Bool { attribute(named: name) != nil }

    /// The first attribute called `name` (`@Bridged`, `@Bridged(…)`).
    func attribute(named name: String) -> AttributeSyntax? {
        for case .attribute(let attribute) in self where attribute.attributeName.trimmedDescription == name {
            return attribute
        }
        return nil
    }
}

/// Where the declaration is: at file scope, or a member of a type whose isolation it shares.
struct Placement {
    /// Calls go through `self.` (a member) or not (a free function).
    var isMember: Bool
    /// The enclosing type is an actor or names a global actor: its methods are isolated, and the
    /// async overload stays isolated with them.
    var isolatedContext: Bool
    /// The enclosing type may take a global actor that its declaration does not name: from a
    /// superclass or a protocol in its inheritance clause, or from anywhere for an extension.
    var mayInferIsolation: Bool

    static let freeFunction = Placement(isMember: false, isolatedContext: false, mayInferIsolation: false)

    init(isMember: Bool, isolatedContext: Bool, mayInferIsolation: Bool) {
        self.isMember = isMember
        self.isolatedContext = isolatedContext
        self.mayInferIsolation = mayInferIsolation
    }

    /// The placement of the members of `type`.
    init(members type: some DeclGroupSyntax) {
        isMember = true
        isolatedContext = type.is(ActorDeclSyntax.self) || type.attributes.hasGlobalActor
        mayInferIsolation =
            type.is(ExtensionDeclSyntax.self) || (!type.is(ProtocolDeclSyntax.self) && type.inheritanceClause != nil)
    }

    /// Reads the lexical context a macro expands in.
    init(lexicalContext: [Syntax]) {
        self = .freeFunction
        guard let enclosing = lexicalContext.first else { return }
        if let type = enclosing.asProtocol(DeclGroupSyntax.self),
            enclosing.is(ActorDeclSyntax.self) || enclosing.is(ClassDeclSyntax.self)
                || enclosing.is(StructDeclSyntax.self)
                || enclosing.is(EnumDeclSyntax.self) || enclosing.is(ExtensionDeclSyntax.self)
                || enclosing.is(ProtocolDeclSyntax.self)
        {
            self.init(members: type)
        }
    }
}
#endif
