// The macros applied to every shape they bridge, as an app at the library's floor writes them
// (macOS 10.15, iOS 13, tvOS 13, watchOS 6, visionOS 1): .ci/check-apple-reach type-checks this
// file for each Apple platform with the macro plugin the Macros package built, so the code the
// macros generate is compiled there, not only the attributes. One declaration per case of the
// expansion tests (Macros/Tests/BridgesMacrosTests/*ExpansionTests.swift) that expands; the
// cases that are diagnostics have nothing to compile. A new shape goes here too.
import BridgesMacros
import Dispatch
import Foundation

struct User: Sendable { let id: Int }
public struct Account: Sendable, Identifiable { public let id: String }
struct Place: Sendable {}
struct APIError: Error {}
final class Request {
    func cancel() {}
}
final class Transport {
    func get<T>(_ completion: @escaping (Result<T, APIError>) -> Void) -> Request { Request() }
}

// MARK: - @Bridged, each handler shape and return

final class Client {
    let transport = Transport()

    /// `(Result<T, Error>)`, returning a handle: `async throws -> T`, cancellation reaches the handle.
    @Bridged
    func fetchUser(id: Int, completion: @escaping (Result<User, Error>) -> Void) -> Request {
        transport.get { (result: Result<User, APIError>) in completion(result.mapError { $0 }) }
    }

    /// `(Result<T, E>)` with a concrete `E`, returning a `Cancellation`: `throws(CallbackFailure<E>)`.
    @Bridged
    func fetchTypedUser(id: Int, completion: @escaping @Sendable (Result<User, APIError>) -> Void) -> Cancellation {
        _ = transport.get(completion)
        return Cancellation {}
    }

    /// `(T?, Error?)`, returning an optional handle.
    @Bridged
    func data(from url: URL, completionHandler: @escaping (Data?, Error?) -> Void) -> Request? { nil }

    /// `(Error?)`, returning nothing.
    @Bridged
    func save(_ id: Int, completion: @escaping (Error?) -> Void) {}

    /// A throwing legacy method with a typed `Result`: bridged with untyped `throws`.
    @Bridged
    func fetchOrThrow(completion: @escaping (Result<User, APIError>) -> Void) throws -> Request {
        transport.get(completion)
    }

    /// Parameters named like the generated body's own names.
    @Bridged
    func lookUp(done: Int, handle: String, completion: @escaping (Int) -> Void) {}
}

/// `(T)`, a free function returning nothing.
@Bridged
func currentPlace(completion: @escaping (Place) -> Void) {}

/// `()`, with a timeout: the timeout's clock needs macOS 13 / iOS 16, so does the declaration.
@available(BridgesClock, *)
final class Animator {
    @Bridged(timeout: .after(.seconds(30)))
    func run(completion: @escaping () -> Void) -> Request { Request() }
}

/// Access level, availability, generics, `static` and `@discardableResult` are kept.
public enum Loader {
    @available(macOS 12, iOS 15, tvOS 15, watchOS 8, *)
    @discardableResult
    @Bridged
    public static func load<T: Decodable>(
        _ type: T.Type, from key: String, completion: @escaping (Result<T, any Error>) -> Void
    ) -> Cancellation where T: Sendable {
        Cancellation {}
    }
}

/// An open method: the overload is public and not overridable.
open class Base {
    public init() {}
    @Bridged
    open func refresh(completion: @escaping (Error?) -> Void) {}
}

/// A mutating method of a struct stays mutating.
struct Counter {
    @Bridged
    mutating func increment(completion: @escaping (Int) -> Void) {}
}

/// A main-actor type: the overload is on the main actor.
@MainActor
final class ViewModel {
    @Bridged
    func reload(completion: @escaping (Result<[String], Error>) -> Void) {}
}

/// An actor's method: the overload stays isolated to the actor.
actor Cache {
    @Bridged
    func value(for key: String, completion: @escaping (String?, Error?) -> Void) {}
}

// MARK: - @BridgedAll

/// A protocol: conformers get the async forms; `@NotBridged` and non-bridgeable methods are left.
@BridgedAll
public protocol AccountService: AnyObject {
    func load(completion: @escaping (Result<[Account], Error>) -> Void) -> Cancellation
    func remove(_ id: Account.ID, completion: @escaping (Error?) -> Void)
    @NotBridged
    func watch(_ handler: @escaping (Account) -> Bool)
    func refresh() async throws
    var name: String { get }
}

/// A main-actor class with a timeout: the extension stays on the main actor.
@available(BridgesClock, *)
@MainActor
@BridgedAll(timeout: .after(.seconds(30)))
final class LegacyClient {
    let transport = Transport()
    func fetch(id: Int, completion: @escaping (Result<User, APIError>) -> Void) -> Request {
        transport.get(completion)
    }
    private func log(_ message: String) {}
}

/// A nonisolated class: the overloads run in the caller's isolation.
@BridgedAll
final class Locator {
    func currentPlace(completion: @escaping (Place) -> Void) {}
}

// MARK: - @BridgedCompletion

final class Backend: Sendable {
    func user(_ id: Int) async throws -> User { User(id: id) }
}

/// A throwing async method: a `(Result<T, any Error>)` handler, delivered where the work ends.
final class Repository: Sendable {
    let api = Backend()
    @BridgedCompletion
    func load(id: Int) async throws -> User {
        try await api.user(id)
    }
}

/// A method returning nothing: an `(Error?)` handler, on the main actor.
@MainActor
final class Model {
    @BridgedCompletion(on: .mainActor)
    public func refresh() async {}
}

/// On a queue, not called when cancelled, a generic free function.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
@BridgedCompletion(on: .queue(.main), whenCancelled: .doNotCall)
func decode<T: Decodable & Sendable>(_ type: T.Type, completion: Data) async throws -> T {
    try JSONDecoder().decode(type, from: completion)
}
