#if Macros
import BridgesMacrosImplementation
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
        }
    }

    @Test func inoutParameter_error() {
        assertMacro {
            """
            @BridgedCompletion
            func fill(_ buffer: inout [UInt8]) async throws {
            }
            """
        }
    }
}
#endif
