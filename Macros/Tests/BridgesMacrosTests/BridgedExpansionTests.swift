#if Macros
import MacroExpansions
import MacroTesting
import Testing

// What `@Bridged` writes for each completion-handler shape and each kind of declaration.
@Suite(.macros(["Bridged": BridgedMacro.self, "NotBridged": NotBridgedMacro.self]))
struct BridgedExpansionTests {
    // MARK: - Shapes

    @Test func result_untyped_returningHandle_cancelsTheHandle() {
        assertMacro {
            """
            final class Client {
                @Bridged
                func fetchUser(id: Int, completion: @escaping (Result<User, Error>) -> Void) -> Request {
                    request(id, completion)
                }
            }
            """
        } expansion: {
            """
            final class Client {
                func fetchUser(id: Int, completion: @escaping (Result<User, Error>) -> Void) -> Request {
                    request(id, completion)
                }

                /// The `async` form of `fetchUser(id:completion:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call is cancelled too);
                ///   and the API's own error as it is.
                nonisolated(nonsending) func fetchUser(id: Int) async throws -> User {
                    try await withCallback { (done: @escaping @Sendable (Result<User, any Error>) -> Void) in
                        let handle = self.fetchUser(id: id, completion: done)
                        Cancellation {
                            handle.cancel()
                        }
                    }
                }
            }
            """
        }
    }

    @Test func result_typed_returningCancellation_throwsCallbackFailure() {
        assertMacro {
            """
            struct Client {
                @Bridged
                func fetchUser(id: Int, completion: @escaping @Sendable (Result<User, APIError>) -> Void) -> Cancellation {
                    start(id, completion)
                }
            }
            """
        } expansion: {
            """
            struct Client {
                func fetchUser(id: Int, completion: @escaping @Sendable (Result<User, APIError>) -> Void) -> Cancellation {
                    start(id, completion)
                }

                /// The `async` form of `fetchUser(id:completion:)`, written by `@Bridged` through `withTypedCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call is cancelled too);
                ///   all of them as `CallbackFailure<APIError>`: `.failure` is the API's own error.
                nonisolated(nonsending) func fetchUser(id: Int) async throws(CallbackFailure<APIError>) -> User {
                    try await withTypedCallback { (done: @escaping @Sendable (Result<User, APIError>) -> Void) in
                        return self.fetchUser(id: id, completion: done)
                    }
                }
            }
            """
        }
    }

    @Test func valueOrError_returningOptionalHandle() {
        assertMacro {
            """
            class Session {
                @Bridged
                func data(from url: URL, completionHandler: @escaping (Data?, Error?) -> Void) -> Task? {
                    nil
                }
            }
            """
        } expansion: {
            """
            class Session {
                func data(from url: URL, completionHandler: @escaping (Data?, Error?) -> Void) -> Task? {
                    nil
                }

                /// The `async` form of `data(from:completionHandler:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call is cancelled too);
                ///   and the API's own error as it is.
                nonisolated(nonsending) func data(from url: URL) async throws -> Data {
                    try await withCallback { (done: @escaping @Sendable (Data?, (any Error)?) -> Void) in
                        let handle = self.data(from: url, completionHandler: done)
                        Cancellation {
                            handle?.cancel()
                        }
                    }
                }
            }
            """
        }
    }

    @Test func value_freeFunction_returningVoid() {
        assertMacro {
            """
            @Bridged
            func currentPlace(_ accuracy: Double, then completion: @escaping (Place) -> Void) {
                completion(.here)
            }
            """
        } expansion: {
            """
            func currentPlace(_ accuracy: Double, then completion: @escaping (Place) -> Void) {
                completion(.here)
            }

            /// The `async` form of `currentPlace(_:then:)`, written by `@Bridged` through `withCallback`.
            ///
            /// - Returns: what the completion handler passed, the first time it was called; a second
            ///   call is ignored and reported through `Diagnostics`.
            /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
            ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
            ///   and the API's own error as it is.
            nonisolated(nonsending) func currentPlace(_ accuracy: Double) async throws -> Place {
                try await withCallback { (done: @escaping @Sendable (Place) -> Void) in
                    currentPlace(accuracy, then: done)
                }
            }
            """
        }
    }

    @Test func error_optionalHandler() {
        assertMacro {
            """
            class Store {
                @Bridged
                func save(_ item: Item, completion: ((Error?) -> Void)?) {
                }
            }
            """
        } expansion: {
            """
            class Store {
                func save(_ item: Item, completion: ((Error?) -> Void)?) {
                }

                /// The `async` form of `save(_:completion:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: when the completion handler is first called; a second call is ignored and
                ///   reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   and the API's own error as it is.
                nonisolated(nonsending) func save(_ item: Item) async throws {
                    try await withCallback { (done: @escaping @Sendable ((any Error)?) -> Void) in
                        self.save(item, completion: done)
                    }
                }
            }
            """
        }
    }

    @Test func none_withTimeout() {
        assertMacro {
            """
            class Animator {
                @Bridged(timeout: .after(.seconds(2)))
                func run(completion: @escaping () -> Void) {
                }
            }
            """
        } expansion: {
            """
            class Animator {
                func run(completion: @escaping () -> Void) {
                }

                /// The `async` form of `run(completion:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: when the completion handler is first called; a second call is ignored and
                ///   reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   `BridgeError.timedOut` after `.after(.seconds(2))`, which cancels the call too;
                ///   and the API's own error as it is.
                nonisolated(nonsending) func run() async throws {
                    try await withCallback(timeout: .after(.seconds(2))) { (done: @escaping @Sendable () -> Void) in
                        self.run(completion: done)
                    }
                }
            }
            """
        }
    }

    // MARK: - Declarations

    @Test func keepsAccessAvailabilityGenericsAndStatic() {
        assertMacro {
            """
            public enum Loader {
                @available(macOS 12, iOS 15, *)
                @discardableResult
                @Bridged
                public static func load<T: Decodable>(_ type: T.Type, from key: String, completion: @escaping (Result<T, any Error>) -> Void) -> Cancellation where T: Sendable {
                    Cancellation {}
                }
            }
            """
        } expansion: {
            """
            public enum Loader {
                @available(macOS 12, iOS 15, *)
                @discardableResult
                public static func load<T: Decodable>(_ type: T.Type, from key: String, completion: @escaping (Result<T, any Error>) -> Void) -> Cancellation where T: Sendable {
                    Cancellation {}
                }

                /// The `async` form of `load(_:from:completion:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call is cancelled too);
                ///   and the API's own error as it is.
                @available(macOS 12, iOS 15, *)
                nonisolated(nonsending) public static func load<T: Decodable>(_ type: T.Type, from key: String) async throws -> T where T: Sendable {
                    try await withCallback { (done: @escaping @Sendable (Result<T, any Error>) -> Void) in
                        return self.load(type, from: key, completion: done)
                    }
                }
            }
            """
        }
    }

    @Test func openMethod_becomesPublic_overrideDropped() {
        assertMacro {
            """
            open class Base {
                @Bridged
                open func refresh(completion: @escaping (Error?) -> Void) {
                }
            }
            """
        } expansion: {
            """
            open class Base {
                open func refresh(completion: @escaping (Error?) -> Void) {
                }

                /// The `async` form of `refresh(completion:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: when the completion handler is first called; a second call is ignored and
                ///   reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   and the API's own error as it is.
                nonisolated(nonsending) public func refresh() async throws {
                    try await withCallback { (done: @escaping @Sendable ((any Error)?) -> Void) in
                        self.refresh(completion: done)
                    }
                }
            }
            """
        }
    }

    @Test func mutatingStructMethod_staysMutating() {
        assertMacro {
            """
            struct Counter {
                @Bridged
                mutating func increment(completion: @escaping (Int) -> Void) {
                }
            }
            """
        } expansion: {
            """
            struct Counter {
                mutating func increment(completion: @escaping (Int) -> Void) {
                }

                /// The `async` form of `increment(completion:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   and the API's own error as it is.
                nonisolated(nonsending) mutating func increment() async throws -> Int {
                    try await withCallback { (done: @escaping @Sendable (Int) -> Void) in
                        self.increment(completion: done)
                    }
                }
            }
            """
        }
    }

    @Test func mainActorType_overloadStaysOnTheMainActor() {
        assertMacro {
            """
            @MainActor
            final class Model {
                @Bridged
                func reload(completion: @escaping (Result<[Item], Error>) -> Void) {
                }
            }
            """
        } expansion: {
            """
            @MainActor
            final class Model {
                func reload(completion: @escaping (Result<[Item], Error>) -> Void) {
                }

                /// The `async` form of `reload(completion:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   and the API's own error as it is.
                func reload() async throws -> [Item] {
                    try await withCallback { (done: @escaping @Sendable (Result<[Item], any Error>) -> Void) in
                        self.reload(completion: done)
                    }
                }
            }
            """
        }
    }

    @Test func actorMethod_overloadStaysIsolated() {
        assertMacro {
            """
            actor Cache {
                @Bridged
                func value(for key: String, completion: @escaping (String?, Error?) -> Void) {
                }
            }
            """
        } expansion: {
            """
            actor Cache {
                func value(for key: String, completion: @escaping (String?, Error?) -> Void) {
                }

                /// The `async` form of `value(for:completion:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   and the API's own error as it is.
                func value(for key: String) async throws -> String {
                    try await withCallback { (done: @escaping @Sendable (String?, (any Error)?) -> Void) in
                        self.value(for: key, completion: done)
                    }
                }
            }
            """
        }
    }

    @Test func throwingLegacyMethod_withTypedResult_bridgedUntyped() {
        assertMacro {
            """
            class Client {
                @Bridged
                func fetch(completion: @escaping (Result<User, APIError>) -> Void) throws -> Request {
                    try request(completion)
                }
            }
            """
        } expansion: {
            """
            class Client {
                func fetch(completion: @escaping (Result<User, APIError>) -> Void) throws -> Request {
                    try request(completion)
                }

                /// The `async` form of `fetch(completion:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call is cancelled too);
                ///   and the API's own error as it is.
                nonisolated(nonsending) func fetch() async throws -> User {
                    try await withCallback { (done: @escaping @Sendable (Result<User, APIError>) -> Void) in
                        let handle = try self.fetch(completion: done)
                        Cancellation {
                            handle.cancel()
                        }
                    }
                }
            }
            """
        }
    }

    @Test func parametersNamedDoneAndHandle_renamedInTheBody() {
        assertMacro {
            """
            class Client {
                @Bridged
                func send(done: Bool, handle: Int, _ completion: @escaping (Error?) -> Void) -> Request {
                    request(completion)
                }
            }
            """
        } expansion: {
            """
            class Client {
                func send(done: Bool, handle: Int, _ completion: @escaping (Error?) -> Void) -> Request {
                    request(completion)
                }

                /// The `async` form of `send(done:handle:_:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: when the completion handler is first called; a second call is ignored and
                ///   reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call is cancelled too);
                ///   and the API's own error as it is.
                nonisolated(nonsending) func send(done: Bool, handle: Int) async throws {
                    try await withCallback { (bridgedDone: @escaping @Sendable ((any Error)?) -> Void) in
                        let bridgedHandle = self.send(done: done, handle: handle, bridgedDone)
                        Cancellation {
                            bridgedHandle.cancel()
                        }
                    }
                }
            }
            """
        }
    }

    // MARK: - Diagnostics

    @Test func onAProperty_error() {
        assertMacro {
            """
            class Client {
                @Bridged
                var user: User
            }
            """
        } diagnostics: {
            """
            class Client {
                @Bridged
                ┬───────
                ╰─ 🛑 @Bridged applies to a method or function with a completion handler; on a protocol or type, use @BridgedAll to bridge every completion-handler method it declares
                var user: User
            }
            """
        }
    }

    @Test func onAProtocolRequirement_errorWithFixIt() {
        assertMacro {
            """
            protocol Client {
                @Bridged
                func fetch(completion: @escaping (Result<User, Error>) -> Void)
            }
            """
        } diagnostics: {
            """
            protocol Client {
                @Bridged
                ┬───────
                ╰─ 🛑 @Bridged cannot add an async method to a protocol's requirements; put @BridgedAll on the protocol, which adds the async forms in an extension (@Bridged(…) on a requirement then says how to bridge that one)
                   ✏️ Remove '@Bridged'
                func fetch(completion: @escaping (Result<User, Error>) -> Void)
            }
            """
        } fixes: {
            """
            protocol Client {
                func fetch(completion: @escaping (Result<User, Error>) -> Void)
            }
            """
        } expansion: {
            """
            protocol Client {
                func fetch(completion: @escaping (Result<User, Error>) -> Void)
            }
            """
        }
    }

    @Test func onARequirementOfABridgedAllProtocol_addsNothing_andReportsItsMistakesHere() {
        assertMacro {
            """
            @BridgedAll
            protocol Downloading {
                @Bridged(completion: "done")
                func download(url: URL, completion: @escaping (URL?, Error?) -> Void, progress: @escaping (Double) -> Void)
                @Bridged(completion: "completion")
                func upload(url: URL, completion: @escaping (Error?) -> Void, progress: @escaping (Double) -> Void)
            }
            """
        } diagnostics: {
            """
            @BridgedAll
            protocol Downloading {
                @Bridged(completion: "done")
                ┬───────────────────────────
                ╰─ 🛑 `completion: "done"` names no parameter of 'download(url:completion:progress:)'; its closures are 'completion', 'progress'
                func download(url: URL, completion: @escaping (URL?, Error?) -> Void, progress: @escaping (Double) -> Void)
                @Bridged(completion: "completion")
                func upload(url: URL, completion: @escaping (Error?) -> Void, progress: @escaping (Double) -> Void)
            }
            """
        }
    }

    @Test func onAnAsyncMethod_errorWithFixItToBridgedCompletion() {
        assertMacro {
            """
            class Client {
                @Bridged(timeout: .after(.seconds(5)))
                func fetch() async throws -> User {
                    user
                }
            }
            """
        } diagnostics: {
            """
            class Client {
                @Bridged(timeout: .after(.seconds(5)))
                ┬─────────────────────────────────────
                ╰─ 🛑 'fetch()' is already async; @Bridged writes the async form of a completion-handler method. For the completion-handler form of an async method, use @BridgedCompletion
                   ✏️ Use '@BridgedCompletion' to write the completion-handler form
                func fetch() async throws -> User {
                    user
                }
            }
            """
        } fixes: {
            """
            class Client {
                @BridgedCompletion
                func fetch() async throws -> User {
                    user
                }
            }
            """
        } expansion: {
            """
            class Client {
                @BridgedCompletion
                func fetch() async throws -> User {
                    user
                }
            }
            """
        }
    }

    @Test func noParameters_error() {
        assertMacro {
            """
            @Bridged
            func refresh() {
            }
            """
        } diagnostics: {
            """
            @Bridged
            ┬───────
            ╰─ 🛑 'refresh()' has no parameters, so no completion handler to bridge; @Bridged needs a method with a completion handler, such as `completion: @escaping (Result<Value, Error>) -> Void`
            func refresh() {
            }
            """
        }
    }

    @Test func lastParameterNotAFunction_error() {
        assertMacro {
            """
            @Bridged
            func fetch(id: Int) -> User {
                user
            }
            """
        } diagnostics: {
            """
            @Bridged
            ┬───────
            ╰─ 🛑 the last parameter of 'fetch(id:)', 'id: Int', is not a completion handler, and no other parameter is a closure; @Bridged needs a completion handler, such as `completion: @escaping (Result<Value, Error>) -> Void`
            func fetch(id: Int) -> User {
                user
            }
            """
        }
    }

    @Test func handlerReturningAValue_error() {
        assertMacro {
            """
            @Bridged
            func ask(completion: @escaping (String) -> Bool) {
            }
            """
        } diagnostics: {
            """
            @Bridged
            ┬───────
            ╰─ 🛑 'ask(completion:)' cannot be bridged: its completion handler returns `Bool`; withCallback can only bridge a handler that returns Void, because the bridge has nothing to answer it with
            func ask(completion: @escaping (String) -> Bool) {
            }
            """
        }
    }

    @Test func throwingHandler_error() {
        assertMacro {
            """
            @Bridged
            func ask(completion: @escaping (String) throws -> Void) {
            }
            """
        } diagnostics: {
            """
            @Bridged
            ┬───────
            ╰─ 🛑 'ask(completion:)' cannot be bridged: its completion handler `(String) throws -> Void` is itself async or throws; a completion handler is a plain function that is called back
            func ask(completion: @escaping (String) throws -> Void) {
            }
            """
        }
    }

    @Test func nonEscapingHandler_errorWithFixIt() {
        assertMacro {
            """
            @Bridged
            func fetch(id: Int, completion: (Result<User, Error>) -> Void) {
            }
            """
        } diagnostics: {
            """
            @Bridged
            ╰─ 🛑 the completion handler 'completion' of 'fetch(id:completion:)' is not @escaping; an API that calls back later keeps its handler, so declare it `@escaping`
               ✏️ Insert '@escaping '
            func fetch(id: Int, completion: (Result<User, Error>) -> Void) {
            }
            """
        } fixes: {
            """
            @Bridged
            func fetch(id: Int, completion: @escaping (Result<User, Error>) -> Void) {
            }
            """
        } expansion: {
            """
            func fetch(id: Int, completion: @escaping (Result<User, Error>) -> Void) {
            }

            /// The `async` form of `fetch(id:completion:)`, written by `@Bridged` through `withCallback`.
            ///
            /// - Returns: what the completion handler passed, the first time it was called; a second
            ///   call is ignored and reported through `Diagnostics`.
            /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
            ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
            ///   and the API's own error as it is.
            nonisolated(nonsending) func fetch(id: Int) async throws -> User {
                try await withCallback { (done: @escaping @Sendable (Result<User, any Error>) -> Void) in
                    fetch(id: id, completion: done)
                }
            }
            """
        }
    }

    @Test func inoutParameter_error() {
        assertMacro {
            """
            @Bridged
            func fill(_ buffer: inout [UInt8], completion: @escaping (Error?) -> Void) {
            }
            """
        } diagnostics: {
            """
            @Bridged
            ╰─ 🛑 parameter 'buffer' is inout, and an async overload cannot write it back when the call completes; return the new value in the completion handler instead
            func fill(_ buffer: inout [UInt8], completion: @escaping (Error?) -> Void) {
            }
            """
        }
    }

    @Test func variadicParameter_error() {
        assertMacro {
            """
            @Bridged
            func send(_ values: Int..., completion: @escaping (Error?) -> Void) {
            }
            """
        } diagnostics: {
            """
            @Bridged
            ╰─ 🛑 parameter 'values' is variadic, and a variadic argument cannot be passed on; take an array (`[Int]`) instead
            func send(_ values: Int..., completion: @escaping (Error?) -> Void) {
            }
            """
        }
    }
}
#endif
