#if Macros
import MacroExpansions
import MacroTesting
import Testing

// What `@BridgedCompletion` writes for async methods, and its diagnostics.
@Suite(.macros(["BridgedCompletion": BridgedCompletionMacro.self]))
struct BridgedCompletionExpansionTests {
    @Test func throwingValue_resultHandler_currentDelivery() {
        assertMacro {
            """
            final class Repository: Sendable {
                @BridgedCompletion
                func load(id: Int) async throws -> User {
                    try await api.user(id)
                }
            }
            """
        } expansion: {
            """
            final class Repository: Sendable {
                func load(id: Int) async throws -> User {
                    try await api.user(id)
                }

                /// The completion-handler form of `load(id:)`, written by `@BridgedCompletion`
                /// through `withCompletion`, for callers not migrated to `async` yet.
                ///
                /// `completion` is called exactly once, on the thread that finished the work, or the one that cancelled, with what the work returned or threw.
                /// `cancel()` on the returned token cancels the work and calls the handler with `CancellationError` at once.
                @discardableResult
                func load(id: Int, completion: @escaping @Sendable (Result<User, any Error>) -> Void) -> Cancellation {
                    withCompletion(completion) {  // 'User' crosses to the handler's thread: it must be Sendable
                        try await self.load(id: id)
                    }
                }
            }
            """
        }
    }

    @Test func void_errorHandler_mainActor() {
        assertMacro {
            """
            @MainActor
            final class Model {
                @BridgedCompletion(on: .mainActor)
                public func refresh() async {
                }
            }
            """
        } expansion: {
            """
            @MainActor
            final class Model {
                public func refresh() async {
                }

                /// The completion-handler form of `refresh()`, written by `@BridgedCompletion`
                /// through `withCompletion`, for callers not migrated to `async` yet.
                ///
                /// `completion` is called exactly once, on the main actor, with what the work returned or threw.
                /// `cancel()` on the returned token cancels the work and calls the handler with `CancellationError` at once.
                @discardableResult
                public func refresh(completion: @escaping @MainActor ((any Error)?) -> Void) -> Cancellation {
                    withCompletion(on: .mainActor, completion) {
                        await self.refresh()
                    }
                }
            }
            """
        }
    }

    @Test func queueDelivery_doNotCall_genericFreeFunction() {
        assertMacro {
            """
            @available(macOS 13, *)
            @BridgedCompletion(on: .queue(.main), whenCancelled: .doNotCall)
            func decode<T: Decodable & Sendable>(_ type: T.Type, completion: Data) async throws -> T {
                try JSONDecoder().decode(type, from: completion)
            }
            """
        } expansion: {
            """
            @available(macOS 13, *)
            func decode<T: Decodable & Sendable>(_ type: T.Type, completion: Data) async throws -> T {
                try JSONDecoder().decode(type, from: completion)
            }

            /// The completion-handler form of `decode(_:completion:)`, written by `@BridgedCompletion`
            /// through `withCompletion`, for callers not migrated to `async` yet.
            ///
            /// `completionHandler` is called exactly once, where `.queue(.main)` says, with what the work returned or threw.
            /// `cancel()` on the returned token cancels the work, and the handler is then not called at all.
            @discardableResult
            @available(macOS 13, *)
            func decode<T: Decodable & Sendable>(_ type: T.Type, completion: Data, completionHandler: @escaping @Sendable (Result<T, any Error>) -> Void) -> Cancellation {
                withCompletion(on: .queue(.main), whenCancelled: .doNotCall, completionHandler) {  // 'T' crosses to the handler's thread: it must be Sendable
                    try await decode(type, completion: completion)
                }
            }
            """
        }
    }

    @Test func notAsync_errorWithFixItToBridged() {
        assertMacro {
            """
            class Client {
                @BridgedCompletion(on: .mainActor)
                func fetch(completion: @escaping (Result<User, Error>) -> Void) {
                }
            }
            """
        } diagnostics: {
            """
            class Client {
                @BridgedCompletion(on: .mainActor)
                ┬─────────────────────────────────
                ╰─ 🛑 'fetch(completion:)' is not async; @BridgedCompletion writes the completion-handler form of an async method. For the async form of a completion-handler method, use @Bridged
                   ✏️ Use '@Bridged' to write the async form
                func fetch(completion: @escaping (Result<User, Error>) -> Void) {
                }
            }
            """
        } fixes: {
            """
            class Client {
                @Bridged
                func fetch(completion: @escaping (Result<User, Error>) -> Void) {
                }
            }
            """
        } expansion: {
            """
            class Client {
                @Bridged
                func fetch(completion: @escaping (Result<User, Error>) -> Void) {
                }
            }
            """
        }
    }

    @Test func notAsyncWithoutHandler_error() {
        assertMacro {
            """
            @BridgedCompletion
            func name() -> String {
                ""
            }
            """
        } diagnostics: {
            """
            @BridgedCompletion
            ┬─────────────────
            ╰─ 🛑 'name()' is not async; @BridgedCompletion writes the completion-handler form of an async method. For the async form of a completion-handler method, use @Bridged
            func name() -> String {
                ""
            }
            """
        }
    }

    @Test func protocolRequirement_error() {
        assertMacro {
            """
            protocol Repository {
                @BridgedCompletion
                func load() async throws -> User
            }
            """
        } diagnostics: {
            """
            protocol Repository {
                @BridgedCompletion
                ┬─────────────────
                ╰─ 🛑 @BridgedCompletion cannot add a method with a body to a protocol's requirements; write the completion-handler form in an extension of the protocol, or put @BridgedCompletion on the conforming type's method
                func load() async throws -> User
            }
            """
        }
    }

    @Test func inoutParameter_error() {
        assertMacro {
            """
            @BridgedCompletion
            func fill(_ buffer: inout [UInt8]) async throws {
            }
            """
        } diagnostics: {
            """
            @BridgedCompletion
            ╰─ 🛑 parameter 'buffer' is inout, and an async overload cannot write it back when the call completes; return the new value in the completion handler instead
            func fill(_ buffer: inout [UInt8]) async throws {
            }
            """
        }
    }
}
#endif
