#if Macros
import MacroExpansions
import MacroTesting
import Testing

// What `@Bridged` writes for the shapes real SDKs have beyond withCallback's five: the shapes
// Apple's importer and Xcode's "Add Async Wrapper" turn into async methods, several closures,
// success/failure pairs, returned values that are not handles, and handlers it cannot read.
@Suite(.macros(["Bridged": BridgedMacro.self]))
struct BridgedSDKShapesExpansionTests {
    // MARK: - Shapes Apple's importer bridges

    @Test func boolAndError_returnsTheBool() {
        assertMacro {
            """
            class NotificationCenter {
                @Bridged
                func requestAuthorization(options: Options, completionHandler: @escaping @Sendable (Bool, Error?) -> Void) {
                }
            }
            """
        } expansion: {
            """
            class NotificationCenter {
                func requestAuthorization(options: Options, completionHandler: @escaping @Sendable (Bool, Error?) -> Void) {
                }

                /// The `async` form of `requestAuthorization(options:completionHandler:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   and the API's own error as it is.
                nonisolated(nonsending) func requestAuthorization(options: Options) async throws -> Bool {
                    try await withCallback { (done: @escaping @Sendable (Bool?, (any Error)?) -> Void) in
                        self.requestAuthorization(options: options, completionHandler: { @Sendable value, error in
                                done(value, error)
                            })
                    }
                }
            }
            """
        }
    }

    @Test func nonOptionalValueAndError_returnsTheValue() {
        assertMacro {
            """
            @Bridged
            func load(completion: @escaping (Data, Error?) -> Void) {
            }
            """
        } expansion: {
            """
            func load(completion: @escaping (Data, Error?) -> Void) {
            }

            /// The `async` form of `load(completion:)`, written by `@Bridged` through `withCallback`.
            ///
            /// - Returns: what the completion handler passed, the first time it was called; a second
            ///   call is ignored and reported through `Diagnostics`.
            /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
            ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
            ///   and the API's own error as it is.
            nonisolated(nonsending) func load() async throws -> Data {
                try await withCallback { (done: @escaping @Sendable (Data?, (any Error)?) -> Void) in
                    load(completion: { @Sendable value, error in
                            done(value, error)
                        })
                }
            }
            """
        }
    }

    @Test func severalValuesAndError_returnsATupleOfTheUnwrappedValues() {
        assertMacro {
            """
            @Bridged
            func load(_ url: URL, completion: @escaping (Data?, URLResponse?, Error?) -> Void) {
            }
            """
        } expansion: {
            """
            func load(_ url: URL, completion: @escaping (Data?, URLResponse?, Error?) -> Void) {
            }

            /// The `async` form of `load(_:completion:)`, written by `@Bridged` through `withCallback`.
            ///
            /// - Returns: what the completion handler passed, the first time it was called; a second
            ///   call is ignored and reported through `Diagnostics`.
            /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
            ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
            ///   `BridgeError.missingValueAndError` if it passes neither an error nor every value;
            ///   and the API's own error as it is.
            nonisolated(nonsending) func load(_ url: URL) async throws -> (Data, URLResponse) {
                try await withCallback { (done: @escaping @Sendable ((Data, URLResponse)?, (any Error)?) -> Void) in
                    load(url, completion: { @Sendable value1, value2, error in
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
            """
        }
    }

    @Test func nonOptionalValuesAndError_noMissingValueCase() {
        assertMacro {
            """
            @Bridged
            func measure(completion: @escaping (Int, Double, NSError?) -> Void) {
            }
            """
        } expansion: {
            """
            func measure(completion: @escaping (Int, Double, NSError?) -> Void) {
            }

            /// The `async` form of `measure(completion:)`, written by `@Bridged` through `withCallback`.
            ///
            /// - Returns: what the completion handler passed, the first time it was called; a second
            ///   call is ignored and reported through `Diagnostics`.
            /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
            ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
            ///   and the API's own error as it is.
            nonisolated(nonsending) func measure() async throws -> (Int, Double) {
                try await withCallback { (done: @escaping @Sendable ((Int, Double)?, (any Error)?) -> Void) in
                    measure(completion: { @Sendable value1, value2, error in
                        if let error {
                            done(nil, error)
                        } else {
                            done((value1, value2), nil)
                        }
                    })
                }
            }
            """
        }
    }

    @Test func nsErrorAndSDKErrors_areTheError() {
        assertMacro {
            """
            class Store {
                @Bridged
                func save(_ item: Item, completion: @escaping (NSError?) -> Void) {
                }
                @Bridged
                func find(_ id: Int, completion: @escaping (Item?, CKError?) -> Void) {
                }
            }
            """
        } expansion: {
            """
            class Store {
                func save(_ item: Item, completion: @escaping (NSError?) -> Void) {
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
                        self.save(item, completion: { @Sendable error in
                                done(error)
                            })
                    }
                }
                func find(_ id: Int, completion: @escaping (Item?, CKError?) -> Void) {
                }

                /// The `async` form of `find(_:completion:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   `BridgeError.missingValueAndError` if it passes neither an error nor every value;
                ///   and the API's own error as it is.
                nonisolated(nonsending) func find(_ id: Int) async throws -> Item {
                    try await withCallback { (done: @escaping @Sendable (Item?, (any Error)?) -> Void) in
                        self.find(id, completion: { @Sendable value, error in
                                done(value, error)
                            })
                    }
                }
            }
            """
        }
    }

    @Test func severalValuesWithoutError_returnsATuple() {
        assertMacro {
            """
            @Bridged
            func pick(completion: @escaping (String, Int) -> Void) {
            }
            """
        } expansion: {
            """
            func pick(completion: @escaping (String, Int) -> Void) {
            }

            /// The `async` form of `pick(completion:)`, written by `@Bridged` through `withCallback`.
            ///
            /// - Returns: what the completion handler passed, the first time it was called; a second
            ///   call is ignored and reported through `Diagnostics`.
            /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
            ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
            ///   and the API's own error as it is.
            nonisolated(nonsending) func pick() async throws -> (String, Int) {
                try await withCallback { (done: @escaping @Sendable ((String, Int)) -> Void) in
                    pick(completion: { @Sendable value1, value2 in
                            done((value1, value2))
                        })
                }
            }
            """
        }
    }

    @Test func handlerNotLast() {
        assertMacro {
            """
            class Uploader {
                @Bridged
                func upload(_ data: Data, completion: @escaping (Error?) -> Void, queue: DispatchQueue) -> Operation {
                    operation
                }
            }
            """
        } expansion: {
            """
            class Uploader {
                func upload(_ data: Data, completion: @escaping (Error?) -> Void, queue: DispatchQueue) -> Operation {
                    operation
                }

                /// The `async` form of `upload(_:completion:queue:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: when the completion handler is first called; a second call is ignored and
                ///   reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call is cancelled too);
                ///   and the API's own error as it is.
                nonisolated(nonsending) func upload(_ data: Data, queue: DispatchQueue) async throws {
                    try await withCallback { (done: @escaping @Sendable ((any Error)?) -> Void) in
                        let handle = self.upload(data, completion: done, queue: queue)
                        Cancellation {
                            handle.cancel()
                        }
                    }
                }
            }
            """
        }
    }

    // MARK: - Several closures

    @Test func twoClosures_errorNamesTheChoice_withAFixItForEach() {
        assertMacro {
            """
            class Downloader {
                @Bridged
                func download(url: URL, completion: @escaping (URL?, Error?) -> Void, progress: @escaping (Double) -> Void) {
                }
            }
            """
        } diagnostics: {
            """
            class Downloader {
                @Bridged
                ┬───────
                ╰─ 🛑 'download(url:completion:progress:)' takes 2 closures, 'completion', 'progress', and @Bridged cannot tell which is the completion handler; name it, `@Bridged(completion: "completion")` (the others are passed on, @Sendable), or a pair bridged as one result, `@Bridged(success: "…", failure: "…")`
                   ✏️ Bridge 'completion' as the completion handler
                   ✏️ Bridge 'progress' as the completion handler
                func download(url: URL, completion: @escaping (URL?, Error?) -> Void, progress: @escaping (Double) -> Void) {
                }
            }
            """
        } fixes: {
            """
            class Downloader {
                @Bridged(completion: "completion")
                func download(url: URL, completion: @escaping (URL?, Error?) -> Void, progress: @escaping (Double) -> Void) {
                }
            }
            """
        } expansion: {
            """
            class Downloader {
                func download(url: URL, completion: @escaping (URL?, Error?) -> Void, progress: @escaping (Double) -> Void) {
                }

                /// The `async` form of `download(url:completion:progress:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   and the API's own error as it is.
                /// - Note: `progress` is `@Sendable` here: the legacy method keeps it and may call it on any thread.
                nonisolated(nonsending) func download(url: URL, progress: @escaping @Sendable (Double) -> Void) async throws -> URL {
                    try await withCallback { (done: @escaping @Sendable (URL?, (any Error)?) -> Void) in
                        download(url: url, completion: done, progress: progress)
                    }
                }
            }
            """
        }
    }

    @Test func completionNamed_otherEscapingClosuresPassedOnSendable() {
        assertMacro {
            """
            class Downloader {
                @Bridged(completion: "completion")
                func download(
                    url: URL,
                    transform: (Data) -> Data,
                    completion: @escaping (URL?, Error?) -> Void,
                    progress: @escaping (Double) -> Void,
                    onRedirect: ((URL) -> Bool)?,
                    onStart: @escaping @MainActor () -> Void,
                    log: @escaping @Sendable (String) -> Void
                ) -> Request {
                    request
                }
            }
            """
        } expansion: {
            """
            class Downloader {
                func download(
                    url: URL,
                    transform: (Data) -> Data,
                    completion: @escaping (URL?, Error?) -> Void,
                    progress: @escaping (Double) -> Void,
                    onRedirect: ((URL) -> Bool)?,
                    onStart: @escaping @MainActor () -> Void,
                    log: @escaping @Sendable (String) -> Void
                ) -> Request {
                    request
                }

                /// The `async` form of `download(url:transform:completion:progress:onRedirect:onStart:log:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call is cancelled too);
                ///   and the API's own error as it is.
                /// - Note: `progress`, `onRedirect` are `@Sendable` here: the legacy method keeps them and may call them on any thread.
                nonisolated(nonsending) func download(url: URL, transform: (Data) -> Data, progress: @escaping @Sendable (Double) -> Void, onRedirect: (@Sendable (URL) -> Bool)?, onStart: @escaping @MainActor () -> Void, log: @escaping @Sendable (String) -> Void) async throws -> URL {
                    try await withCallback { (done: @escaping @Sendable (URL?, (any Error)?) -> Void) in
                        let handle = self.download(url: url, transform: transform, completion: done, progress: progress, onRedirect: onRedirect, onStart: onStart, log: log)
                        Cancellation {
                            handle.cancel()
                        }
                    }
                }
            }
            """
        }
    }

    @Test func completionNamed_unknownName_errorListsTheClosures() {
        assertMacro {
            """
            @Bridged(completion: "handler")
            func download(url: URL, completion: @escaping (URL?, Error?) -> Void, progress: @escaping (Double) -> Void) {
            }
            """
        } diagnostics: {
            """
            @Bridged(completion: "handler")
            ┬──────────────────────────────
            ╰─ 🛑 `completion: "handler"` names no parameter of 'download(url:completion:progress:)'; its closures are 'completion', 'progress'
            func download(url: URL, completion: @escaping (URL?, Error?) -> Void, progress: @escaping (Double) -> Void) {
            }
            """
        }
    }

    @Test func completionNamed_notALiteral_error() {
        assertMacro {
            """
            @Bridged(completion: name)
            func download(url: URL, completion: @escaping (URL?, Error?) -> Void, progress: @escaping (Double) -> Void) {
            }
            """
        } diagnostics: {
            """
            @Bridged(completion: name)
            ┬                    ────
            ╰─ 🛑 write `completion:` as a string literal naming a parameter, such as `completion: "completion"`; the macro reads it as written
            func download(url: URL, completion: @escaping (URL?, Error?) -> Void, progress: @escaping (Double) -> Void) {
            }
            """
        }
    }

    @Test func successFailurePair_foundByItsLabels_typedWhenTheErrorIsConcrete() {
        assertMacro {
            """
            class Accounts {
                @Bridged
                func load(id: Int, success: @escaping (User) -> Void, failure: @escaping (APIError) -> Void) {
                }
            }
            """
        } expansion: {
            """
            class Accounts {
                func load(id: Int, success: @escaping (User) -> Void, failure: @escaping (APIError) -> Void) {
                }

                /// The `async` form of `load(id:success:failure:)`, written by `@Bridged` through `withTypedCallback`.
                ///
                /// - Returns: what `success` or `failure` passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   all of them as `CallbackFailure<APIError>`: `.failure` is the API's own error.
                nonisolated(nonsending) func load(id: Int) async throws(CallbackFailure<APIError>) -> User {
                    try await withTypedCallback { (done: @escaping @Sendable (Result<User, APIError>) -> Void) in
                        self.load(id: id, success: { @Sendable value in
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

    @Test func successFailurePair_voidSuccess_untypedError_andAProgressPassedOn() {
        assertMacro {
            """
            class Accounts {
                @Bridged
                func delete(id: Int, onSuccess: @escaping () -> Void, onError: @escaping (Error) -> Void, progress: @escaping (Double) -> Void) {
                }
            }
            """
        } expansion: {
            """
            class Accounts {
                func delete(id: Int, onSuccess: @escaping () -> Void, onError: @escaping (Error) -> Void, progress: @escaping (Double) -> Void) {
                }

                /// The `async` form of `delete(id:onSuccess:onError:progress:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: when `onSuccess` or `onError` is first called; a second call is ignored and
                ///   reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   and the API's own error as it is.
                /// - Note: `progress` is `@Sendable` here: the legacy method keeps it and may call it on any thread.
                nonisolated(nonsending) func delete(id: Int, progress: @escaping @Sendable (Double) -> Void) async throws {
                    try await withCallback { (done: @escaping @Sendable (Result<Void, any Error>) -> Void) in
                        self.delete(id: id, onSuccess: { @Sendable in
                                done(.success(()))
                            }, onError: { @Sendable error in
                                done(.failure(error))
                            }, progress: progress)
                    }
                }
            }
            """
        }
    }

    @Test func successFailurePair_namedByTheAttribute() {
        assertMacro {
            """
            class Accounts {
                @Bridged(success: "then", failure: "otherwise")
                func load(id: Int, then: @escaping (User) -> Void, otherwise: @escaping (Error) -> Void) {
                }
            }
            """
        } expansion: {
            """
            class Accounts {
                func load(id: Int, then: @escaping (User) -> Void, otherwise: @escaping (Error) -> Void) {
                }

                /// The `async` form of `load(id:then:otherwise:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what `then` or `otherwise` passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   and the API's own error as it is.
                nonisolated(nonsending) func load(id: Int) async throws -> User {
                    try await withCallback { (done: @escaping @Sendable (Result<User, any Error>) -> Void) in
                        self.load(id: id, then: { @Sendable value in
                                done(.success(value))
                            }, otherwise: { @Sendable error in
                                done(.failure(error))
                            })
                    }
                }
            }
            """
        }
    }

    @Test func successFailurePair_halfNamed_error() {
        assertMacro {
            """
            @Bridged(success: "then")
            func load(id: Int, then: @escaping (User) -> Void, otherwise: @escaping (Error) -> Void) {
            }
            """
        } diagnostics: {
            """
            @Bridged(success: "then")
            ┬────────────────────────
            ╰─ 🛑 `success:` and `failure:` name a pair of closures: write both, or `completion:` alone
            func load(id: Int, then: @escaping (User) -> Void, otherwise: @escaping (Error) -> Void) {
            }
            """
        }
    }

    @Test func successFailurePair_failureThatIsNotAnError_error() {
        assertMacro {
            """
            @Bridged(success: "success", failure: "failure")
            func load(id: Int, success: @escaping (User) -> Void, failure: @escaping (String) -> Void) {
            }
            """
        } diagnostics: {
            """
            @Bridged(success: "success", failure: "failure")
            ╰─ 🛑 the failure closure 'failure' of 'load(id:success:failure:)' must be `@escaping (Error) -> Void` (or a type whose name ends in Error)
            func load(id: Int, success: @escaping (User) -> Void, failure: @escaping (String) -> Void) {
            }
            """
        }
    }

    @Test func aClosureThatReturnsAValue_isNotTheHandler_andIsPassedOn() {
        assertMacro {
            """
            @Bridged
            func search(matching isIncluded: @escaping (Item) -> Bool, completion: @escaping (Result<[Item], Error>) -> Void) {
            }
            """
        } expansion: {
            """
            func search(matching isIncluded: @escaping (Item) -> Bool, completion: @escaping (Result<[Item], Error>) -> Void) {
            }

            /// The `async` form of `search(matching:completion:)`, written by `@Bridged` through `withCallback`.
            ///
            /// - Returns: what the completion handler passed, the first time it was called; a second
            ///   call is ignored and reported through `Diagnostics`.
            /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
            ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
            ///   and the API's own error as it is.
            /// - Note: `matching` is `@Sendable` here: the legacy method keeps it and may call it on any thread.
            nonisolated(nonsending) func search(matching isIncluded: @escaping @Sendable (Item) -> Bool) async throws -> [Item] {
                try await withCallback { (done: @escaping @Sendable (Result<[Item], any Error>) -> Void) in
                    search(matching: isIncluded, completion: done)
                }
            }
            """
        }
    }

    @Test func oneEscapingClosureBesideNonEscapingOnes_isTheHandler() {
        assertMacro {
            """
            @Bridged
            func write(_ body: (Transaction) -> Void, completion: @escaping (Error?) -> Void) {
            }
            """
        } expansion: {
            """
            func write(_ body: (Transaction) -> Void, completion: @escaping (Error?) -> Void) {
            }

            /// The `async` form of `write(_:completion:)`, written by `@Bridged` through `withCallback`.
            ///
            /// - Returns: when the completion handler is first called; a second call is ignored and
            ///   reported through `Diagnostics`.
            /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
            ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
            ///   and the API's own error as it is.
            nonisolated(nonsending) func write(_ body: (Transaction) -> Void) async throws {
                try await withCallback { (done: @escaping @Sendable ((any Error)?) -> Void) in
                    write(body, completion: done)
                }
            }
            """
        }
    }

    // MARK: - What the method returns

    @Test func returnsAnId_errorWithAFixItToIgnoreIt() {
        assertMacro {
            """
            class ImageManager {
                @Bridged
                func requestImage(named name: String, completion: @escaping (Image?, Error?) -> Void) -> Int32 {
                    0
                }
            }
            """
        } diagnostics: {
            """
            class ImageManager {
                @Bridged
                ╰─ 🛑 'requestImage(named:completion:)' returns 'Int32', which has no `cancel()` to call when the awaiting task is cancelled; write `returnValue: .ignore` to leave it (the call then cannot be cancelled), or return a handle with `cancel()`
                   ✏️ Ignore the returned value (the call cannot be cancelled)
                func requestImage(named name: String, completion: @escaping (Image?, Error?) -> Void) -> Int32 {
                    0
                }
            }
            """
        } fixes: {
            """
            class ImageManager {
                @Bridged(returnValue: .ignore)
                func requestImage(named name: String, completion: @escaping (Image?, Error?) -> Void) -> Int32 {
                    0
                }
            }
            """
        } expansion: {
            """
            class ImageManager {
                func requestImage(named name: String, completion: @escaping (Image?, Error?) -> Void) -> Int32 {
                    0
                }

                /// The `async` form of `requestImage(named:completion:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   and the API's own error as it is.
                nonisolated(nonsending) func requestImage(named name: String) async throws -> Image {
                    try await withCallback { (done: @escaping @Sendable (Image?, (any Error)?) -> Void) in
                        _ = requestImage(named: name, completion: done)
                    }
                }
            }
            """
        }
    }

    @Test func returnValueIgnore_discardsTheValue() {
        assertMacro {
            """
            class ImageManager {
                @Bridged(returnValue: .ignore)
                func requestImage(named name: String, completion: @escaping (Image?, Error?) -> Void) -> RequestID {
                    0
                }
            }
            """
        } expansion: {
            """
            class ImageManager {
                func requestImage(named name: String, completion: @escaping (Image?, Error?) -> Void) -> RequestID {
                    0
                }

                /// The `async` form of `requestImage(named:completion:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call itself cannot be cancelled);
                ///   and the API's own error as it is.
                nonisolated(nonsending) func requestImage(named name: String) async throws -> Image {
                    try await withCallback { (done: @escaping @Sendable (Image?, (any Error)?) -> Void) in
                        _ = self.requestImage(named: name, completion: done)
                    }
                }
            }
            """
        }
    }

    @Test func returnValueResumeAndCancel_resumesTheTask() {
        assertMacro {
            """
            class Session {
                @Bridged(timeout: .after(.seconds(30)), returnValue: .resumeAndCancel)
                func dataTask(with url: URL, completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) -> DataTask {
                    task
                }
            }
            """
        } expansion: {
            """
            class Session {
                func dataTask(with url: URL, completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) -> DataTask {
                    task
                }

                /// The `async` form of `dataTask(with:completionHandler:)`, written by `@Bridged` through `withCallback`.
                ///
                /// - Returns: what the completion handler passed, the first time it was called; a second
                ///   call is ignored and reported through `Diagnostics`.
                /// - Throws: `BridgeError.callbackDropped` if the handler is released without being called,
                ///   instead of suspending forever; `CancellationError` when the awaiting task is cancelled (the call is cancelled too);
                ///   `BridgeError.missingValueAndError` if it passes neither an error nor every value;
                ///   `BridgeError.timedOut` after `.after(.seconds(30))`, which cancels the call too;
                ///   and the API's own error as it is.
                nonisolated(nonsending) func dataTask(with url: URL) async throws -> (Data, URLResponse) {
                    try await withCallback(timeout: .after(.seconds(30))) { (done: @escaping @Sendable ((Data, URLResponse)?, (any Error)?) -> Void) in
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
            }
            """
        }
    }

    @Test func returnValueResumeAndCancel_onAVoidMethod_error() {
        assertMacro {
            """
            @Bridged(returnValue: .resumeAndCancel)
            func load(completion: @escaping (Error?) -> Void) {
            }
            """
        } diagnostics: {
            """
            @Bridged(returnValue: .resumeAndCancel)
            ┬──────────────────────────────────────
            ╰─ 🛑 'load(completion:)' returns nothing, so `returnValue: .resumeAndCancel` has nothing to resume; remove it
            func load(completion: @escaping (Error?) -> Void) {
            }
            """
        }
    }

    // MARK: - Handlers a macro cannot read

    @Test func escapingTypealiasHandler_errorSaysSpellItOut() {
        assertMacro {
            """
            @Bridged
            func geocode(_ address: String, completionHandler: @escaping GeocodeCompletionHandler) {
            }
            """
        } diagnostics: {
            """
            @Bridged
            ╰─ 🛑 the completion handler 'completionHandler' of 'geocode(_:completionHandler:)' is spelled through 'GeocodeCompletionHandler', which a macro cannot see through; spell the function type out, such as `completionHandler: @escaping (Result<Value, Error>) -> Void`
            func geocode(_ address: String, completionHandler: @escaping GeocodeCompletionHandler) {
            }
            """
        }
    }

    @Test func optionalTypealiasHandler_errorSaysSpellItOut() {
        assertMacro {
            """
            @Bridged
            func geocode(_ address: String, completion: GeocodeCompletionHandler?) {
            }
            """
        } diagnostics: {
            """
            @Bridged
            ╰─ 🛑 'geocode(_:completion:)' has no parameter of a function type; if 'completion: GeocodeCompletionHandler?' is a completion handler spelled through a typealias, spell the function type out, such as `completion: @escaping (Result<Value, Error>) -> Void`: a macro cannot see through a typealias
            func geocode(_ address: String, completion: GeocodeCompletionHandler?) {
            }
            """
        }
    }

    // MARK: - Isolation the macro cannot see

    @Test func subclass_theCallSaysWhereAnInheritedGlobalActorGoes() {
        assertMacro {
            """
            final class ProfileController: UIViewController {
                @Bridged
                func loadProfile(completion: @escaping (Result<Profile, Error>) -> Void) {
                }
            }
            """
        } expansion: {
            """
            final class ProfileController: UIViewController {
                func loadProfile(completion: @escaping (Result<Profile, Error>) -> Void) {
                }

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
