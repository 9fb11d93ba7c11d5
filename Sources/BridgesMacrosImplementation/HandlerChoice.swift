#if Macros
import SwiftDiagnostics
import SwiftSyntax

/// The arguments of `@Bridged(…)`, as written.
struct BridgedOptions {
    /// `completion: "name"`: the closure that is the completion handler.
    var completion: String?
    /// `success: "name", failure: "name"`: a pair of closures bridged as one result.
    var success: String?
    var failure: String?
    /// `timeout:`, as written.
    var timeout: String?
    /// `returnValue:`: what to do with the value the method returns.
    var returnValue: ReturnValue = .cancel

    enum ReturnValue: String {
        case cancel, resumeAndCancel, ignore
    }

    init() {}

    /// Reads `@Bridged(…)`; `timeout` is the default of an enclosing `@BridgedAll`.
    init(_ attribute: AttributeSyntax?, timeout defaultTimeout: String? = nil) throws(Refusal) {
        timeout = defaultTimeout
        guard let attribute else { return }
        completion = try attribute.stringArgument(named: "completion")
        success = try attribute.stringArgument(named: "success")
        failure = try attribute.stringArgument(named: "failure")
        if let timeout = attribute.argument(named: "timeout") { self.timeout = timeout }
        if let written = attribute.argument(named: "returnValue") {
            let name = written.split(separator: ".").last.map(String.init) ?? written
            guard let value = ReturnValue(rawValue: name) else {
                throw Refusal(
                    message: .error(
                        "returnValueNotALiteral",
                        "write `returnValue:` as one of `.cancel`, `.resumeAndCancel`, `.ignore`; the macro reads it as written"
                    ))
            }
            returnValue = value
        }
    }
}

/// Which parameter is the completion handler, and how it is bridged.
enum HandlerChoice {
    /// One closure, at `index`.
    case single(index: Int, shape: CallbackShape)
    /// A `success:`/`failure:` pair.
    case pair(success: Int, failure: Int, ClosurePair)

    var indices: [Int] {
        switch self {
        case .single(let index, _): [index]
        case .pair(let success, let failure, _): [success, failure]
        }
    }

    /// Finds the completion handler of `signature`, as `options` name it or, when they do not,
    /// as the only escaping closure or a `success:`/`failure:` pair. Refuses, naming the choice,
    /// when the declaration has several closures and nothing says which is the completion.
    static func choose(
        _ signature: Signature, options: BridgedOptions, attribute: AttributeSyntax?
    ) throws(Refusal)
        -> HandlerChoice
    {
        let parameters = signature.parameters
        let readings = parameters.map { readHandler($0.type) }
        let closures = parameters.indices.filter { readings[$0].isClosure }

        func index(named name: String, for argument: String) throws(Refusal) -> Int {
            let found = parameters.indices.filter {
                parameters[$0].firstName.text == name || parameters[$0].secondName?.text == name
            }
            guard let index = found.first else {
                let choices = closures.map { "'\(parameters[$0].label)'" }
                throw Refusal(
                    message: .error(
                        "unknownParameter",
                        "`\(argument): \"\(name)\"` names no parameter of '\(signature.fullName)'"
                            + (choices.isEmpty
                                ? ", which has no closure parameter"
                                : "; its closures are \(choices.joined(separator: ", "))")
                    ))
            }
            guard readings[index].isClosure else {
                throw Refusal(
                    message: .error(
                        "notAClosure",
                        "`\(argument): \"\(name)\"` names '\(parameters[index].label): \(parameters[index].type.trimmedDescription)', which is not a closure"
                    ), node: Syntax(parameters[index]))
            }
            return index
        }

        if options.success != nil || options.failure != nil {
            guard let successName = options.success, let failureName = options.failure else {
                throw Refusal(
                    message: .error(
                        "halfAPair",
                        "`success:` and `failure:` name a pair of closures: write both, or `completion:` alone"))
            }
            let success = try index(named: successName, for: "success")
            let failure = try index(named: failureName, for: "failure")
            return .pair(success: success, failure: failure, try pair(signature, success: success, failure: failure))
        }
        if let name = options.completion {
            let index = try index(named: name, for: "completion")
            return .single(index: index, shape: try shape(signature, index: index, reading: readings[index]))
        }

        guard !closures.isEmpty else {
            throw noHandler(signature)
        }
        // A closure that returns a value, throws or is async is not a completion handler while
        // another closure could be one; alone, it is refused with the reason.
        let usable = closures.filter {
            if case .unsupported = readings[$0] { false } else { true }
        }
        let pool = usable.isEmpty ? closures : usable
        // A non-escaping closure is called during the call, so it cannot be the completion
        // handler while an escaping one is there.
        let escaping = pool.filter { readings[$0].isEscaping }
        if pool.count == 1 || escaping.count == 1 {
            let index = pool.count == 1 ? pool[0] : escaping[0]
            return .single(index: index, shape: try shape(signature, index: index, reading: readings[index]))
        }
        // Several escaping closures: a success/failure pair by their names, or a choice to make.
        let candidates = escaping.isEmpty ? pool : escaping
        let successes = candidates.filter { parameters[$0].label.lowercased().contains("success") }
        let failures = candidates.filter {
            let label = parameters[$0].label.lowercased()
            return label.contains("fail") || label.contains("error")
        }
        if successes.count == 1, failures.count == 1,
            let pair = try? pair(signature, success: successes[0], failure: failures[0])
        {
            return .pair(success: successes[0], failure: failures[0], pair)
        }
        throw ambiguous(signature, closures: candidates, attribute: attribute)
    }

    private static func shape(
        _ signature: Signature, index: Int, reading: HandlerReading
    ) throws(Refusal)
        -> CallbackShape
    {
        let parameter = signature.parameters[index]
        switch reading {
        case .notAFunction:
            preconditionFailure("Internal inconsistency: \(parameter.label) chosen though not a closure")
        case .aliased(let alias):
            throw Refusal(
                message: .error(
                    "aliasedHandler",
                    "the completion handler '\(parameter.label)' of '\(signature.fullName)' is spelled through '\(alias.trimmedDescription)', which a macro cannot see through; spell the function type out, such as `\(parameter.label): @escaping (Result<Value, Error>) -> Void`"
                ), node: Syntax(parameter.type))
        case .unsupported(let why):
            throw Refusal(message: .error("unsupportedHandler", "'\(signature.fullName)' cannot be bridged: \(why)"))
        case .handler(let shape, let escaping):
            guard escaping else {
                // `withCallback` hands out an escaping `done`; a non-escaping parameter could not
                // take it, and an API that calls back later must declare it escaping anyway.
                let escapingType = parameter.type.with(\.leadingTrivia, [])
                let fixed = TypeSyntax("@escaping \(escapingType)")
                throw Refusal(
                    message: .error(
                        "nonEscapingHandler",
                        "the completion handler '\(parameter.label)' of '\(signature.fullName)' is not @escaping; an API that calls back later keeps its handler, so declare it `@escaping`"
                    ),
                    fixIts: [
                        .replace(
                            message: BridgesFixIt(message: "Insert '@escaping '"), oldNode: parameter.type,
                            newNode: fixed)
                    ],
                    node: Syntax(parameter.type))
            }
            return shape
        }
    }

    private static func pair(_ signature: Signature, success: Int, failure: Int) throws(Refusal) -> ClosurePair {
        let parameters = signature.parameters
        func function(_ index: Int) -> FunctionTypeSyntax? {
            let (base, escaping, _) = peelClosureType(parameters[index].type)
            guard escaping, let function = base.as(FunctionTypeSyntax.self), isVoid(function.returnClause.type),
                function.effectSpecifiers == nil
            else { return nil }
            return function
        }
        guard let successFunction = function(success), successFunction.parameters.count <= 1 else {
            throw Refusal(
                message: .error(
                    "notASuccessClosure",
                    "the success closure '\(parameters[success].label)' of '\(signature.fullName)' must be `@escaping (Value) -> Void` or `@escaping () -> Void`"
                ), node: Syntax(parameters[success].type))
        }
        guard let failureFunction = function(failure), failureFunction.parameters.count == 1,
            let failureType = failureFunction.parameters.first?.type, isErrorLike(failureType)
        else {
            throw Refusal(
                message: .error(
                    "notAFailureClosure",
                    "the failure closure '\(parameters[failure].label)' of '\(signature.fullName)' must be `@escaping (Error) -> Void` (or a type whose name ends in Error)"
                ), node: Syntax(parameters[failure].type))
        }
        let value = successFunction.parameters.first.map(\.type).flatMap { isVoid($0) ? nil : $0 }
        return ClosurePair(success: value, failure: isError(failureType) ? nil : failureType.trimmed)
    }

    private static func noHandler(_ signature: Signature) -> Refusal {
        guard let last = signature.parameters.last else {
            return Refusal(
                message: .error(
                    "noHandler",
                    "'\(signature.fullName)' has no parameters, so no completion handler to bridge; @Bridged needs a method with a completion handler, such as `completion: @escaping (Result<Value, Error>) -> Void`"
                ))
        }
        if let suspect = suspectedAlias(signature) {
            return Refusal(
                message: .error(
                    "noHandler",
                    "'\(signature.fullName)' has no parameter of a function type; if '\(suspect.label): \(suspect.type.trimmedDescription)' is a completion handler spelled through a typealias, spell the function type out, such as `\(suspect.label): @escaping (Result<Value, Error>) -> Void`: a macro cannot see through a typealias"
                ), node: Syntax(suspect.type))
        }
        return Refusal(
            message: .error(
                "noHandler",
                "the last parameter of '\(signature.fullName)', '\(last.label): \(last.type.trimmedDescription)', is not a completion handler, and no other parameter is a closure; @Bridged needs a completion handler, such as `completion: @escaping (Result<Value, Error>) -> Void`"
            ))
    }

    /// A parameter that is probably a completion handler spelled through a typealias, such as
    /// `completion: CompletionHandler?`: its label or its type's name says handler.
    static func suspectedAlias(_ signature: Signature) -> FunctionParameterSyntax? {
        let handlerWords = ["completion", "handler", "callback", "reply", "block"]
        return signature.parameters.first { parameter in
            let (base, _, _) = peelClosureType(parameter.type)
            guard base.is(IdentifierTypeSyntax.self) || base.is(MemberTypeSyntax.self),
                base.as(IdentifierTypeSyntax.self)?.genericArgumentClause == nil
            else { return false }
            let words = [parameter.label, base.trimmedDescription].map { $0.lowercased() }
            return words.contains { word in handlerWords.contains { word.contains($0) } }
        }
    }

    private static func ambiguous(_ signature: Signature, closures: [Int], attribute: AttributeSyntax?) -> Refusal {
        let labels = closures.map { signature.parameters[$0].label }
        let likely =
            labels.first { label in
                ["completion", "handler", "callback", "reply", "done"].contains { label.lowercased().contains($0) }
            } ?? labels[0]
        var fixIts: [FixIt] = []
        if let attribute {
            for label in labels {
                fixIts.append(
                    FixIt(
                        message: BridgesFixIt(message: "Bridge '\(label)' as the completion handler"),
                        changes: [
                            .replace(
                                oldNode: Syntax(attribute),
                                newNode: Syntax(attribute.adding(argument: "completion", value: "\"\(label)\"")))
                        ]))
            }
        }
        return Refusal(
            message: .error(
                "ambiguousHandler",
                "'\(signature.fullName)' takes \(labels.count) closures, \(labels.map { "'\($0)'" }.joined(separator: ", ")), and @Bridged cannot tell which is the completion handler; name it, `@Bridged(completion: \"\(likely)\")` (the others are passed on, @Sendable), or a pair bridged as one result, `@Bridged(success: \"…\", failure: \"…\")`"
            ),
            fixIts: fixIts)
    }
}

extension FunctionParameterSyntax {
    /// The argument label, or the parameter name after `_`.
    var label: String {
        firstName.tokenKind == .wildcard ? (secondName?.text ?? "_") : firstName.text
    }
}

extension AttributeSyntax {
    /// The expression passed as `label:`, as written.
    func argument(named label: String) -> String? {
        guard case .argumentList(let arguments) = self.arguments else { return nil }
        return arguments.first { $0.label?.text == label }?.expression.trimmedDescription
    }

    /// The string literal passed as `label:`; a refusal when it is not a plain literal.
    func stringArgument(named label: String) throws(Refusal) -> String? {
        guard case .argumentList(let arguments) = self.arguments,
            let expression = arguments.first(where: { $0.label?.text == label })?.expression
        else { return nil }
        guard let literal = expression.as(StringLiteralExprSyntax.self), literal.segments.count == 1,
            case .stringSegment(let segment) = literal.segments.first
        else {
            throw Refusal(
                message: .error(
                    "notALiteral",
                    "write `\(label):` as a string literal naming a parameter, such as `\(label): \"completion\"`; the macro reads it as written"
                ), node: Syntax(expression))
        }
        return segment.content.text
    }

    /// The attribute with `label: value` added after its other arguments.
    func adding(argument label: String, value: String) -> AttributeSyntax {
        var list: [String] = []
        if case .argumentList(let arguments) = self.arguments {
            list = arguments.map { $0.with(\.trailingComma, nil).trimmedDescription }
        }
        // `completion:` comes first, `returnValue:` last, as the macro declares them.
        if label == "completion" { list.insert("\(label): \(value)", at: 0) } else { list.append("\(label): \(value)") }
        let text = "@\(attributeName.trimmedDescription)(\(list.joined(separator: ", ")))"
        let parsed = AttributeSyntax(stringLiteral: text)
        return parsed.with(\.leadingTrivia, leadingTrivia).with(\.trailingTrivia, trailingTrivia)
    }
}
#endif
