#if Macros
@_exported import Bridges

/// Writes the `async` overload of a completion-handler method through `withCallback`, with
/// every guarantee `withCallback` keeps.
///
/// For an SDK you do not own (Apple's, a vendor's), nobody can write the attribute on its
/// declarations: restate the methods you use in a protocol marked ``BridgedAll(timeout:)`` and
/// conform the SDK's type to it (`extension CLGeocoder: Geocoding {}`); see there.
///
/// <!-- snippet: compiled — Macros/Tests/BridgesMacrosTests/DocSnippets.swift#bridged (the Macros package compiles and tests it, in CI) -->
/// ```swift
/// final class UserClient {
///     let transport = UserTransport()
///
///     @Bridged
///     func fetchUser(id: Int, completion: @escaping (Result<User, APIError>) -> Void) -> Request {
///         transport.get(id, completion: completion)
///     }
/// }
/// // adds, beside it:
/// // func fetchUser(id: Int) async throws(CallbackFailure<APIError>) -> User
/// ```
///
/// The completion handler is the method's only escaping closure, wherever it is, in one of
/// these shapes (what the overload returns after the arrow):
/// - `withCallback`'s own: `(Result<T, E>)` → `T`, `(T?, Error?)` → `T`, `(T)` → `T`,
///   `(Error?)` and `()` → nothing;
/// - the ones Apple's importer turns into `async` methods: a value beside an error,
///   `(Bool, Error?)` → `Bool` (the permission-request shape) or `(Status, Error?)` → `Status`;
///   several values and an error, `(Data?, URLResponse?, Error?)` → `(Data, URLResponse)`, optional
///   values unwrapped (a missing one without an error throws ``BridgeError/missingValueAndError``);
///   `NSError?` or an SDK's own `…Error?` as the error;
/// - several values without an error, `(String, Int)` → `(String, Int)`.
///
/// With several escaping closures, say which is the completion handler:
/// `@Bridged(completion: "completion")` passes the others on as `@Sendable` parameters of the
/// overload (the SDK calls them on its own threads; a closure a `@MainActor` caller writes for a
/// parameter that is not `@Sendable` would be main-actor isolated, and trap there). A pair
/// labelled `success…` and `…failure`/`…error` is bridged as one result without being named
/// (``Bridged(success:failure:timeout:returnValue:)`` names one that is not). Anything else is an
/// error at the attribute that names the closures, with a fix-it for each.
///
/// The method returns `Void`, a `Cancellation`, or a handle with `cancel()` (optional or not),
/// which the overload cancels when the awaiting task is cancelled; `returnValue:` says otherwise
/// (``BridgedReturnValue``): `.resumeAndCancel` for a task that starts suspended
/// (`URLSessionDataTask`), `.ignore` for a request id or a flag (an `Int32` or a `Bool` without it
/// is an error with that fix-it).
///
/// - A second call of the handler is ignored and reported; a dropped handler throws
///   ``BridgeError/callbackDropped``; cancellation reaches the returned handle.
/// - `Result<T, E>` (or a `failure:` closure taking `E`) with a concrete `E` gives
///   `throws(CallbackFailure<E>)` (see `withTypedCallback`); `Error` gives untyped `throws`.
/// - Access level, availability, global actor, generic parameters and `where` clause are kept.
/// - Outside an actor or a global-actor type the overload is `nonisolated(nonsending)`: it runs
///   in its caller's isolation, so a Swift 6 `@MainActor` caller awaits it on a non-`Sendable`
///   object. A type whose isolation is inferred (a subclass of a `@MainActor` class, a type
///   conforming to a `@MainActor` protocol) needs its global actor written on the method or the
///   type: the compiler otherwise reports "call to main actor-isolated instance method … in a
///   synchronous nonisolated context" in the overload, on a line whose comment says this.
/// - A handler spelled through a typealias (`@escaping CLGeocodeCompletionHandler`) cannot be
///   read by a macro: spell the function type out.
/// - The attribute sees only its own declaration: if the type already declares the `async`
///   form, the compiler reports "invalid redeclaration"; remove one of them (``BridgedAll(timeout:)``,
///   which sees the whole type, skips such a method with a warning).
/// - Parameters:
///   - completion: The name (label) of the closure that is the completion handler, when the
///     method has several.
///   - timeout: Gives up with ``BridgeError/timedOut`` and cancels the call, e.g.
///     `@Bridged(timeout: .after(.seconds(30)))`. Evaluated on each call; type-checked where the
///     attribute is, so it names static or global values, not the instance's.
///     `BridgeTimeout.after` needs `Clock` (macOS 13, iOS 16, tvOS 16, watchOS 9): an SDK that
///     deploys lower writes `.custom("30 seconds") { try await Task.sleep(nanoseconds: 30_000_000_000) }`,
///     which runs everywhere, or puts `@available(iOS 16, macOS 13, *)` on the method.
///   - returnValue: What the overload does with the value the method returns.
@attached(peer, names: overloaded)
public macro Bridged(
    completion: String? = nil, timeout: BridgeTimeout? = nil, returnValue: BridgedReturnValue = .cancel
) =
    #externalMacro(module: "BridgesMacrosPlugin", type: "BridgedMacro")

/// `@Bridged` for a `success:`/`failure:` pair of closures, bridged as one result: the first
/// call of either ends the wait, with the value or the error.
///
/// A pair labelled `success…` and `…failure`/`…error` is found without this form; name the
/// closures when their labels say nothing (`@Bridged(success: "onDone", failure: "onProblem")`).
@attached(peer, names: overloaded)
public macro Bridged(
    success: String, failure: String, timeout: BridgeTimeout? = nil, returnValue: BridgedReturnValue = .cancel
) = #externalMacro(module: "BridgesMacrosPlugin", type: "BridgedMacro")

/// What the `async` form that ``Bridged(completion:timeout:returnValue:)`` writes does with the
/// value the legacy method returns.
public enum BridgedReturnValue: Sendable {
    /// Calls `cancel()` on it when the awaiting task is cancelled: a request handle, an
    /// operation, a `Cancellation`. The default.
    case cancel
    /// Calls `resume()` on it after the call, and `cancel()` when the task is cancelled: a task
    /// that starts suspended, such as the `URLSessionDataTask` of `dataTask(with:completionHandler:)`.
    case resumeAndCancel
    /// Leaves it: a request id, a flag. The call then cannot be cancelled; the wait still can.
    case ignore
}

/// `@Bridged` for every completion-handler method of a protocol or type, in one extension.
///
/// On a protocol, every conforming type gets the `async` forms. This is the way for an SDK you
/// do not own: restate the methods you use, with the signatures Xcode's generated interface shows
/// (Jump to Definition), and conform the SDK's types to the protocol:
///
/// <!-- snippet: compiled — Macros/Tests/BridgesMacrosTests/DocSnippets.swift#sdkProtocols (the Macros package compiles and tests it, in CI) -->
/// ```swift
/// @BridgedAll
/// protocol Geocoding {
///     func reverseGeocodeLocation(
///         _ location: CLLocation, completionHandler: @escaping @Sendable ([CLPlacemark]?, (any Error)?) -> Void)
/// }
/// extension CLGeocoder: Geocoding {}
///
/// @BridgedAll
/// protocol NotificationAuthorizing {
///     func requestAuthorization(
///         options: UNAuthorizationOptions, completionHandler: @escaping @Sendable (Bool, (any Error)?) -> Void)
/// }
/// extension UNUserNotificationCenter: NotificationAuthorizing {}
///
/// @BridgedAll
/// protocol DataLoading {
///     @Bridged(returnValue: .resumeAndCancel)  // a data task starts suspended
///     func dataTask(
///         with url: URL, completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
///     ) -> URLSessionDataTask
/// }
/// extension URLSession: DataLoading {}
///
/// // Swift 6: hold each SDK object as its protocol, where a test also puts its fake.
/// @MainActor final class PlaceModel {
///     let geocoder: any Geocoding = CLGeocoder()
///     let notifications: any NotificationAuthorizing = UNUserNotificationCenter.current()
///     let session: any DataLoading = URLSession.shared
///     var place: String?
///     var alertsAllowed = false
///
///     func locate(_ location: CLLocation) async throws {
///         place = try await geocoder.reverseGeocodeLocation(location).first?.name
///         alertsAllowed = try await notifications.requestAuthorization(options: [.alert])
///     }
///
///     func image(at url: URL) async throws -> Data {
///         try await session.dataTask(with: url).0
///     }
/// }
/// ```
///
/// - Through the protocol type the `async` form is the one written here. On the SDK's own class,
///   Swift prefers the class's members: Apple's importer gives many classes an `async` twin of
///   the same name (`CLGeocoder.reverseGeocodeLocation(_:)`), which has none of Bridges'
///   guarantees and which Swift 6 code on the main actor cannot call on a non-`Sendable` SDK
///   object without `NonisolatedNonsendingByDefault` ("sending … risks causing data races").
///   Hold the object as the protocol.
/// - Restate each signature exactly, `@Sendable` included: a mismatch is an error at the
///   conformance ("sendability of function types … does not match requirement"). Spell a
///   typealiased handler out: a macro cannot see through a typealias, and the type is the same.
/// - `@Bridged(…)` on a requirement configures that one (`completion:`, `success:failure:`,
///   `timeout:`, `returnValue:`), and reports its mistakes there.
///
/// A method the macro cannot bridge is skipped with a warning at the attribute saying why (several
/// closures and no choice, a handler spelled through a typealias, an `async` form the type already
/// declares); mark it ``NotBridged()`` to silence it. Methods without a closure, `async` methods,
/// and methods marked `@Bridged` (on a type), `@BridgedCompletion` or `@NotBridged` are left
/// alone (a remark lists them).
@attached(extension, names: arbitrary)
public macro BridgedAll(timeout: BridgeTimeout? = nil) =
    #externalMacro(module: "BridgesMacrosPlugin", type: "BridgedAllMacro")

/// Writes the completion-handler overload of an `async` method through `withCompletion`, for
/// callers not migrated yet (Objective-C, old modules).
///
/// <!-- snippet: compiled — Macros/Tests/BridgesMacrosTests/DocSnippets.swift#bridgedCompletion (the Macros package compiles and tests it, in CI) -->
/// ```swift
/// final class UserStore: Sendable {
///     let backend = UserBackend()
///
///     @BridgedCompletion(on: .mainActor)
///     func load(id: Int) async throws -> User {
///         try await backend.user(id: id)
///     }
/// }
/// // adds, beside it:
/// // @discardableResult
/// // func load(id: Int, completion: @escaping @MainActor (Result<User, any Error>) -> Void) -> Cancellation
/// ```
///
/// The handler is called exactly once (with `whenCancelled: .doNotCall`, at most once): with the
/// value, the error, or `CancellationError` when the returned token is cancelled first. A method
/// that returns nothing gets an `(Error?) -> Void` handler. The value goes from the task that ran
/// the work to the handler's thread, so in Swift 6 it must be `Sendable`: for an SDK type that is
/// not, return a `Sendable` value made from it (the compiler's error lands on the line of the
/// overload whose comment says this).
/// - Parameters:
///   - delivery: Where the handler runs (``Delivery``): `.current`, `.queue(q)`, or
///     `.mainActor`, which makes the handler `@MainActor`.
///   - whenCancelled: ``CancelledCompletion/callWithCancellationError`` (default) or
///     ``CancelledCompletion/doNotCall``.
@attached(peer, names: overloaded)
public macro BridgedCompletion(
    on delivery: Delivery = .current, whenCancelled: CancelledCompletion = .callWithCancellationError
) = #externalMacro(module: "BridgesMacrosPlugin", type: "BridgedCompletionMacro")

/// Leaves a method out of ``BridgedAll(timeout:)`` without a warning. Adds nothing.
@attached(peer)
public macro NotBridged() = #externalMacro(module: "BridgesMacrosPlugin", type: "NotBridgedMacro")
#endif
