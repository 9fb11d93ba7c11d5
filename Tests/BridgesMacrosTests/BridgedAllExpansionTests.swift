#if Macros
import BridgesMacrosImplementation
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
        }
    }
}
#endif
