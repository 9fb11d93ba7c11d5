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

                /// The `async` form of `download(_:completion:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   `BridgeError.missingValueAndError` if it passes neither an error nor every value;
                ///   and the API's own error as it is.
                nonisolated(nonsending) public func download(_ id: Account.ID) async throws -> (Data, URLResponse) {
                    try await withCallback { (done: @escaping @Sendable ((Data, URLResponse)?, (any Error)?) -> Void) in
                        self.download(id, completion: { @Sendable value1, value2, error in
                            if let error {
                                done(nil, error)
                            } else if let value1, let value2 {
                                done((value1, value2), nil)
                            } else {
                                done(nil, nil)
                            }
                        })
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
                        Cancellation {
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

    // MARK: - SDKs you do not own: a protocol that restates their methods

    @Test func sdkProtocol_requirementsConfiguredByBridged_andPairsFound() {
        assertMacro {
            """
            @BridgedAll
            protocol SDKClients {
                func reverseGeocodeLocation(_ location: CLLocation, completionHandler: @escaping @Sendable ([CLPlacemark]?, (any Error)?) -> Void)
                func requestAuthorization(options: UNAuthorizationOptions, completionHandler: @escaping @Sendable (Bool, (any Error)?) -> Void)
                static func requestAuthorization(for accessLevel: PHAccessLevel, handler: @escaping @Sendable (PHAuthorizationStatus) -> Void)
                @Bridged(returnValue: .resumeAndCancel)
                func dataTask(with url: URL, completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) -> URLSessionDataTask
                func signIn(user: String, success: @escaping (Session) -> Void, failure: @escaping (Error) -> Void)
            }
            """
        } expansion: {
            """
            protocol SDKClients {
                func reverseGeocodeLocation(_ location: CLLocation, completionHandler: @escaping @Sendable ([CLPlacemark]?, (any Error)?) -> Void)
                func requestAuthorization(options: UNAuthorizationOptions, completionHandler: @escaping @Sendable (Bool, (any Error)?) -> Void)
                static func requestAuthorization(for accessLevel: PHAccessLevel, handler: @escaping @Sendable (PHAuthorizationStatus) -> Void)
                @Bridged(returnValue: .resumeAndCancel)
                func dataTask(with url: URL, completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) -> URLSessionDataTask
                func signIn(user: String, success: @escaping (Session) -> Void, failure: @escaping (Error) -> Void)
            }

            extension SDKClients {
                /// The `async` form of `reverseGeocodeLocation(_:completionHandler:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   and the API's own error as it is.
                nonisolated(nonsending) func reverseGeocodeLocation(_ location: CLLocation) async throws -> [CLPlacemark] {
                    try await withCallback { (done: @escaping @Sendable ([CLPlacemark]?, (any Error)?) -> Void) in
                        self.reverseGeocodeLocation(location, completionHandler: done)
                    }
                }

                /// The `async` form of `requestAuthorization(options:completionHandler:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   and the API's own error as it is.
                nonisolated(nonsending) func requestAuthorization(options: UNAuthorizationOptions) async throws -> Bool {
                    try await withCallback { (done: @escaping @Sendable (Bool?, (any Error)?) -> Void) in
                        self.requestAuthorization(options: options, completionHandler: { @Sendable value, error in
                                done(value, error)
                            })
                    }
                }

                /// The `async` form of `requestAuthorization(for:handler:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   and the API's own error as it is.
                nonisolated(nonsending) static func requestAuthorization(for accessLevel: PHAccessLevel) async throws -> PHAuthorizationStatus {
                    try await withCallback { (done: @escaping @Sendable (PHAuthorizationStatus) -> Void) in
                        self.requestAuthorization(for: accessLevel, handler: done)
                    }
                }

                /// The `async` form of `dataTask(with:completionHandler:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call is cancelled too);
                ///   `BridgeError.missingValueAndError` if it passes neither an error nor every value;
                ///   and the API's own error as it is.
                nonisolated(nonsending) func dataTask(with url: URL) async throws -> (Data, URLResponse) {
                    try await withCallback { (done: @escaping @Sendable ((Data, URLResponse)?, (any Error)?) -> Void) in
                        let handle = self.dataTask(with: url, completionHandler: { @Sendable value1, value2, error in
                            if let error {
                                done(nil, error)
                            } else if let value1, let value2 {
                                done((value1, value2), nil)
                            } else {
                                done(nil, nil)
                            }
                        })
                        handle.resume()
                        Cancellation {
                            handle.cancel()
                        }
                    }
                }

                /// The `async` form of `signIn(user:success:failure:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what `success` or `failure` passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   and the API's own error as it is.
                nonisolated(nonsending) func signIn(user: String) async throws -> Session {
                    try await withCallback { (done: @escaping @Sendable (Result<Session, any Error>) -> Void) in
                        self.signIn(user: user, success: { @Sendable value in
                                done(.success(value))
                            }, failure: { @Sendable error in
                                done(.failure(error))
                            })
                    }
                }
            }
            """
        }
    }

    @Test func typealiasHandler_warns_notRemarks() {
        assertMacro {
            """
            @BridgedAll
            protocol Geocoding {
                func geocode(_ address: String, completionHandler: @escaping GeocodeCompletionHandler)
                func lookUp(_ address: String, completion: LookUpCompletion?)
            }
            """
        } diagnostics: {
            """
            @BridgedAll
            ├─ ⚠️ @BridgedAll skipped 'geocode(_:completionHandler:)': the completion handler 'completionHandler' of 'geocode(_:completionHandler:)' is spelled through 'GeocodeCompletionHandler', which a macro cannot see through; spell the function type out, such as `completionHandler: @escaping (Result<Value, Error>) -> Void` (mark it @NotBridged to silence this)
            ╰─ ⚠️ @BridgedAll skipped 'lookUp(_:completion:)': 'lookUp(_:completion:)' has no parameter of a function type; if 'completion: LookUpCompletion?' is a completion handler spelled through a typealias, spell the function type out, such as `completion: @escaping (Result<Value, Error>) -> Void`: a macro cannot see through a typealias (mark it @NotBridged to silence this)
            protocol Geocoding {
                func geocode(_ address: String, completionHandler: @escaping GeocodeCompletionHandler)
                func lookUp(_ address: String, completion: LookUpCompletion?)
            }
            """
        } expansion: {
            """
            protocol Geocoding {
                func geocode(_ address: String, completionHandler: @escaping GeocodeCompletionHandler)
                func lookUp(_ address: String, completion: LookUpCompletion?)
            }
            """
        }
    }

    @Test func asyncTwin_warnsAndSkips_insteadOfAnInvalidRedeclaration() {
        assertMacro {
            """
            @BridgedAll
            final class Client {
                func fetch(id: Int, completion: @escaping (Result<User, Error>) -> Void) {
                }
                func fetch(id: Int) async throws -> User {
                    try await backend.user(id)
                }
            }
            """
        } diagnostics: {
            """
            @BridgedAll
            ┬──────────
            ├─ ⚠️ @BridgedAll skipped 'fetch(id:completion:)': the type already declares its async form, 'fetch(id:)'; two would be an invalid redeclaration (mark it @NotBridged to silence this)
            ╰─ ℹ️ @BridgedAll left alone, having no completion handler to bridge or being marked: 'fetch(id:)'
            final class Client {
                func fetch(id: Int, completion: @escaping (Result<User, Error>) -> Void) {
                }
                func fetch(id: Int) async throws -> User {
                    try await backend.user(id)
                }
            }
            """
        } expansion: {
            """
            final class Client {
                func fetch(id: Int, completion: @escaping (Result<User, Error>) -> Void) {
                }
                func fetch(id: Int) async throws -> User {
                    try await backend.user(id)
                }
            }
            """
        }
    }

    @Test func severalClosures_warnsWithTheChoice() {
        assertMacro {
            """
            @BridgedAll
            protocol Downloading {
                func download(url: URL, completion: @escaping (URL?, Error?) -> Void, progress: @escaping (Double) -> Void)
            }
            """
        } diagnostics: {
            """
            @BridgedAll
            ╰─ ⚠️ @BridgedAll skipped 'download(url:completion:progress:)': 'download(url:completion:progress:)' takes 2 closures, 'completion', 'progress', and @Bridged cannot tell which is the completion handler; name it, `@Bridged(completion: "completion")` (the others are passed on, @Sendable), or a pair bridged as one result, `@Bridged(success: "…", failure: "…")` (mark it @NotBridged to silence this)
            protocol Downloading {
                func download(url: URL, completion: @escaping (URL?, Error?) -> Void, progress: @escaping (Double) -> Void)
            }
            """
        } expansion: {
            """
            protocol Downloading {
                func download(url: URL, completion: @escaping (URL?, Error?) -> Void, progress: @escaping (Double) -> Void)
            }
            """
        }
    }

    @Test func subclass_theCallSaysWhereAnInheritedGlobalActorGoes() {
        assertMacro {
            """
            @BridgedAll
            final class ProfileController: UIViewController {
                func loadProfile(completion: @escaping (Result<Profile, Error>) -> Void) {
                }
            }
            """
        } expansion: {
            """
            final class ProfileController: UIViewController {
                func loadProfile(completion: @escaping (Result<Profile, Error>) -> Void) {
                }
            }

            extension ProfileController {
                /// The `async` form of `loadProfile(completion:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   and the API's own error as it is.
                nonisolated(nonsending) func loadProfile() async throws -> Profile {
                    try await withCallback { (done: @escaping @Sendable (Result<Profile, any Error>) -> Void) in
                        self.loadProfile(completion: done)  // isolated through a superclass or protocol? write its global actor on the method or type
                    }
                }
            }
            """
        }
    }
}
#endif
