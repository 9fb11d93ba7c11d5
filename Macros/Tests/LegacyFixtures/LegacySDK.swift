#if Macros
import BridgesMacros
import BridgesTesting

// A years-old SDK in Swift 5 mode, as teams have them: non-Sendable classes, completion handlers
// in every shape, handles with `cancel()`. Each method forwards to a `FakeCompletionAPI`, so a
// test completes, fails, calls back twice or drops the call, and sees cancellation arrive. The
// attributes are all the migration adds.

/// The SDK's request handle: a non-Sendable class with `cancel()`.
public final class LegacyRequest {
    private let token: Cancellation
    public private(set) var cancelCount = 0
    init(_ token: Cancellation) { self.token = token }
    public func cancel() {
        cancelCount += 1
        token.cancel()
    }
}

/// The SDK's own error type.
public struct LegacyError: Error, Equatable {
    public let code: Int
    public init(code: Int) { self.code = code }
}

/// A non-Sendable client with one method per completion-handler shape.
public final class LegacyClient {
    public let names = FakeCompletionAPI<Int, String>()
    public let events = FakeCompletionAPI<Void, Int>()
    public init() {}

    /// `(Result<T, Error>)`, returning a handle.
    @Bridged
    public func fetchName(id: Int, completion: @escaping (Result<String, Error>) -> Void) -> LegacyRequest {
        LegacyRequest(names.call(id) { completion($0) })
    }

    /// `(Result<T, E>)` with a concrete `E`, returning a `Cancellation`: typed throws.
    @Bridged
    public func fetchTypedName(id: Int, completion: @escaping (Result<String, LegacyError>) -> Void) -> Cancellation {
        names.call(id) { result in completion(result.mapError { $0 as? LegacyError ?? LegacyError(code: -1) }) }
    }

    /// `(T?, Error?)`, returning an optional handle.
    @Bridged
    public func lookUp(_ id: Int, completionHandler: @escaping (String?, Error?) -> Void) -> LegacyRequest? {
        LegacyRequest(
            names.call(id) { result in
                switch result {
                case .success(let name): completionHandler(name, nil)
                case .failure(let error): completionHandler(nil, error)
                }
            })
    }

    /// `(T)`, returning nothing: cancellation cannot reach the call.
    @Bridged
    public func nextEvent(completion: @escaping (Int) -> Void) {
        events.call { completion((try? $0.get()) ?? -1) }
    }

    /// `(Error?)`.
    @Bridged
    public func save(_ id: Int, completion: @escaping (Error?) -> Void) -> LegacyRequest {
        LegacyRequest(
            names.call(id) { result in
                if case .failure(let error) = result { completion(error) } else { completion(nil) }
            })
    }
}

/// `()` with a timeout on a test clock, and a free function.
public final class LegacyAnimator {
    public let runs = FakeCompletionAPI<Void, Int>()
    /// The attribute's argument is type-checked where the attribute is, outside any instance.
    public static let clock = TestClock()
    public init() {}

    @Bridged(timeout: .after(.seconds(5), on: LegacyAnimator.clock))
    public func run(completion: @escaping () -> Void) -> LegacyRequest {
        LegacyRequest(runs.call { _ in completion() })
    }
}

/// A free function of the SDK.
@Bridged
public func legacyGreeting(for client: LegacyClient, completion: @escaping (Result<String, Error>) -> Void) {
    _ = client.fetchName(id: 0, completion: completion)
}

/// A newer async API of the SDK, with the completion-handler form its older callers use.
public final class LegacyCatalog: Sendable {
    public init() {}

    @BridgedCompletion
    public func title(of id: Int) async throws -> String { "title \(id)" }
}

/// A whole protocol bridged at once; conformers get the async forms.
@BridgedAll
public protocol LegacyAccountService: AnyObject {
    func loadAccounts(completion: @escaping (Result<[String], Error>) -> Void) -> Cancellation
    func remove(_ account: String, completion: @escaping (Error?) -> Void)
    func accountCount() -> Int
}

/// A conformer of the protocol, over a fake.
public final class LegacyAccounts: LegacyAccountService {
    public let api = FakeCompletionAPI<String, [String]>()
    public init() {}
    public func loadAccounts(completion: @escaping (Result<[String], Error>) -> Void) -> Cancellation {
        api.call("load") { completion($0) }
    }
    public func remove(_ account: String, completion: @escaping (Error?) -> Void) {
        api.call(account) { result in
            if case .failure(let error) = result { completion(error) } else { completion(nil) }
        }
    }
    public func accountCount() -> Int { api.invocationCount }
}
#endif
