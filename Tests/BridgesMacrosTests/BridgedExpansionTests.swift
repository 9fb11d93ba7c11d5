#if Macros
import BridgesMacrosImplementation
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
        }
    }

    @Test func onAnAsyncMethod_error() {
        assertMacro {
            """
            class Client {
                @Bridged
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
        }
    }

    @Test func threeValueHandler_errorSaysWhatToWrite() {
        assertMacro {
            """
            @Bridged
            func load(_ url: URL, completion: @escaping (Data?, URLResponse?, Error?) -> Void) {
            }
            """
        }
    }

    @Test func nonOptionalValueBesideError_error() {
        assertMacro {
            """
            @Bridged
            func load(completion: @escaping (Data, Error?) -> Void) {
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
        }
    }

    @Test func throwingHandler_error() {
        assertMacro {
            """
            @Bridged
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
        }
    }

    @Test func inoutParameter_error() {
        assertMacro {
            """
            @Bridged
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
        }
    }
}
#endif
