#if Macros
import MacroExpansions
import MacroTesting
import Testing

// What `@BridgedAll` writes for a protocol and for types, and what it says about what it skipped.
@Suite(.macros(["BridgedAll": BridgedAllMacro.self]))
struct BridgedAllExpansionTests {
    @Test func publicProtocol_extensionWithEveryBridgeableMethod_warnsForTheRest() {
        assertMacro {
            """
            @BridgedAll
            public protocol AccountService {
                func load(completion: @escaping (Result<[Account], Error>) -> Void) -> Cancellation
                func remove(_ id: Account.ID, completion: @escaping (Error?) -> Void)
                func download(_ id: Account.ID, completion: @escaping (Data?, URLResponse?, Error?) -> Void)
                @NotBridged
                func watch(_ handler: @escaping (Account) -> Bool)
                func refresh() async throws
                func cancelAll()
                var name: String { get }
            }
            """
        } diagnostics: {
            """
            @BridgedAll
            ┬──────────
            ├─ ⚠️ @BridgedAll skipped 'download(_:completion:)': 'download(_:completion:)' cannot be bridged: its completion handler takes 3 values, `(Data?, URLResponse?, Error?) -> Void`; withCallback bridges (Result<T, E>), (T?, Error?), (T), (Error?) and () handlers. Write the overload by hand and pass on what you keep: `withCallback { done in api.call { data, _, error in done(data, error) } }` (mark it @NotBridged to silence this)
            ╰─ ℹ️ @BridgedAll left alone, having no completion handler to bridge or being marked: 'watch(_:)', 'refresh()', 'cancelAll()'
            public protocol AccountService {
                func load(completion: @escaping (Result<[Account], Error>) -> Void) -> Cancellation
                func remove(_ id: Account.ID, completion: @escaping (Error?) -> Void)
                func download(_ id: Account.ID, completion: @escaping (Data?, URLResponse?, Error?) -> Void)
                @NotBridged
                func watch(_ handler: @escaping (Account) -> Bool)
                func refresh() async throws
                func cancelAll()
                var name: String { get }
            }
            """
        } expansion: {
            """
            public protocol AccountService {
                func load(completion: @escaping (Result<[Account], Error>) -> Void) -> Cancellation
                func remove(_ id: Account.ID, completion: @escaping (Error?) -> Void)
                func download(_ id: Account.ID, completion: @escaping (Data?, URLResponse?, Error?) -> Void)
                @NotBridged
                func watch(_ handler: @escaping (Account) -> Bool)
                func refresh() async throws
                func cancelAll()
                var name: String { get }
            }

            extension AccountService {
                /// The `async` form of `load(completion:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call is cancelled too);
                ///   and the API's own error as it is.
                nonisolated(nonsending) public func load() async throws -> [Account] {
                    try await withCallback { (done: @escaping @Sendable (Result<[Account], any Error>) -> Void) in
                        return self.load(completion: done)
                    }
                }

                /// The `async` form of `remove(_:completion:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: when the completion handler is first called; a second call is ignored and
                ///   reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   and the API's own error as it is.
                nonisolated(nonsending) public func remove(_ id: Account.ID) async throws {
                    try await withCallback { (done: @escaping @Sendable ((any Error)?) -> Void) in
                        self.remove(id, completion: done)
                    }
                }
            }
            """
        }
    }

    @Test func mainActorClass_withTimeout_extensionStaysOnTheMainActor() {
        assertMacro {
            """
            @MainActor
            @BridgedAll(timeout: .after(.seconds(30)))
            final class LegacyClient {
                func fetch(id: Int, completion: @escaping (Result<User, APIError>) -> Void) -> Request {
                    request(id, completion)
                }
                private func log(_ message: String) {}
            }
            """
        } diagnostics: {
            """
            @MainActor
            @BridgedAll(timeout: .after(.seconds(30)))
            ┬─────────────────────────────────────────
            ╰─ ℹ️ @BridgedAll left alone, having no completion handler to bridge or being marked: 'log(_:)'
            final class LegacyClient {
                func fetch(id: Int, completion: @escaping (Result<User, APIError>) -> Void) -> Request {
                    request(id, completion)
                }
                private func log(_ message: String) {}
            }
            """
        } expansion: {
            """
            @MainActor
            final class LegacyClient {
                func fetch(id: Int, completion: @escaping (Result<User, APIError>) -> Void) -> Request {
                    request(id, completion)
                }
                private func log(_ message: String) {}
            }

            extension LegacyClient {
                /// The `async` form of `fetch(id:completion:)`, written by `@Bridged` through `withTypedCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call is cancelled too);
                ///   `BridgeError.timedOut` after `.after(.seconds(30))`, which cancels the call too;
                ///   all of them as `CallbackFailure<APIError>`: `.failure` is the API's own error.
                func fetch(id: Int) async throws(CallbackFailure<APIError>) -> User {
                    try await withTypedCallback(timeout: .after(.seconds(30))) { (done: @escaping @Sendable (Result<User, APIError>) -> Void) in
                        let handle = self.fetch(id: id, completion: done)
                        return Cancellation {
                            handle.cancel()
                        }
                    }
                }
            }
            """
        }
    }

    @Test func nonisolatedClass_overloadsRunInTheCallersIsolation() {
        assertMacro {
            """
            @BridgedAll
            final class Locator {
                func currentPlace(completion: @escaping (Place) -> Void) {
                }
            }
            """
        } expansion: {
            """
            final class Locator {
                func currentPlace(completion: @escaping (Place) -> Void) {
                }
            }

            extension Locator {
                /// The `async` form of `currentPlace(completion:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   and the API's own error as it is.
                nonisolated(nonsending) func currentPlace() async throws -> Place {
                    try await withCallback { (done: @escaping @Sendable (Place) -> Void) in
                        self.currentPlace(completion: done)
                    }
                }
            }
            """
        }
    }

    @Test func nothingToBridge_noExtension() {
        assertMacro {
            """
            @BridgedAll
            protocol Plain {
                func name() -> String
            }
            """
        } diagnostics: {
            """
            @BridgedAll
            ┬──────────
            ╰─ ℹ️ @BridgedAll left alone, having no completion handler to bridge or being marked: 'name()'
            protocol Plain {
                func name() -> String
            }
            """
        } expansion: {
            """
            protocol Plain {
                func name() -> String
            }
            """
        }
    }
}
#endif
