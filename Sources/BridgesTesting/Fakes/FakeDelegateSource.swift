/// The delegate protocol of ``FakeDelegateSource``: the shape of `CLLocationManagerDelegate`
/// and its kin, one method per event and one for the end.
///
/// Adopt it in the `DelegateProxy` subclass that forwards to a stream's sink:
/// ```swift
/// final class Readings: DelegateProxy<Int, any Error>, FakeSourceDelegate, @unchecked Sendable {
///     func source(didReceive event: Int) { _ = sink.yield(event) }
///     func source(didFailWith error: any Error) { sink.finish(throwing: error) }
/// }
/// ```
public protocol FakeSourceDelegate: AnyObject {
    /// What the source delivers.
    associatedtype Event
    /// Called once per ``FakeDelegateSource/yield(_:)``, synchronously, on the caller's thread.
    func source(didReceive event: Event)
    /// Called by ``FakeDelegateSource/finish(throwing:)``: the source stopped with `error`.
    func source(didFailWith error: any Error)
}

/// A legacy delegate-based manager that the test drives, recording what the code under test
/// did to it: the shape of `CLLocationManager`, `CBCentralManager` or an SDK's own manager.
///
/// It holds its delegate `weak`ly (so a proxy nobody keeps alive vanishes, the classic bug),
/// is started and stopped, and is not `Sendable`, like a plain class of a Swift 5 SDK: code in a
/// `@MainActor` view model captures it in a `CallbackStream` builder and its teardown, which
/// run on the main actor.
///
/// <!-- snippet: test -->
/// ```swift
/// let manager = FakeDelegateSource<Readings>()
/// let readings = CallbackStream<Int, any Error>(buffering: .unbounded) { sink in
///     let proxy = Readings(sink)
///     manager.delegate = proxy              // weak: the stream keeps the proxy alive
///     manager.start()
///     return proxy.retained { manager.stop(); manager.delegate = nil }
/// }
/// ```
/// The test then calls ``yield(_:)`` (or scripts ``whenStarted``) and checks ``calls``:
/// `[.delegateSet, .start, .stop, .delegateCleared]` once the stream's teardown has run. When a
/// `for await` over the stream exits on an actor (break, return, throw, or its task's
/// cancellation), a teardown written on that actor has run before the next statement, so a
/// `@MainActor` test checks ``calls`` on the line after its loop, and a restart sees a stopped
/// manager.
///
/// It also stands in for the SDK's own manager behind the app's seam, a protocol the real
/// manager conforms to, with no fake class to write: `Delegate` is then the SDK's delegate
/// protocol, one line conforms the fake to the seam, and ``send(_:)`` calls the delegate's
/// methods:
/// ```swift
/// protocol LocationManaging: AnyObject {
///     var delegate: (any LegacyLocationDelegate)? { get set }
///     func start()
///     func stop()
/// }
/// extension LegacyLocationManager: LocationManaging {}
/// extension FakeDelegateSource: LocationManaging where Delegate == any LegacyLocationDelegate {}
///
/// func fakeManager() -> any LocationManaging { FakeDelegateSource<any LegacyLocationDelegate>() }
/// // in the test: manager.send { $0.locationManager(system, didUpdate: location) }
/// ```
/// Other requirements of the seam (a property, a permission request) go in the same extension.
public final class FakeDelegateSource<Delegate> {

    /// What the code under test did to the manager, in order.
    public enum Call: Equatable, Sendable, CustomStringConvertible {
        /// `delegate` was set to an object.
        case delegateSet
        /// `delegate` was set to `nil`.
        case delegateCleared
        /// `start()` was called.
        case start
        /// `stop()` was called.
        case stop

        public var description: String {
            switch self {
            case .delegateSet: "delegate set"
            case .delegateCleared: "delegate cleared"
            case .start: "start()"
            case .stop: "stop()"
            }
        }
    }

    /// Held weakly, as legacy managers hold their delegates (a class, or a class-bound protocol's
    /// existential such as `any CLLocationManagerDelegate`).
    public var delegate: Delegate? {
        get { held as? Delegate }
        set {
            held = newValue.map { $0 as AnyObject }
            calls.append(held == nil ? .delegateCleared : .delegateSet)
        }
    }
    private weak var held: AnyObject?

    /// Every call the code under test made, in order.
    public private(set) var calls: [Call] = []
    /// Between `start()` and `stop()`.
    public private(set) var isRunning = false
    /// What the test wants the manager to do when it is started, like a manager that reports a
    /// first reading at once: called at the end of `start()`, with this manager.
    public var whenStarted: ((FakeDelegateSource) -> Void)?

    public init() {}

    // MARK: - Called by the code under test

    /// Starts delivering events to the delegate.
    public func start() {
        calls.append(.start)
        isRunning = true
        whenStarted?(self)
    }

    /// Stops delivering events.
    public func stop() {
        calls.append(.stop)
        isRunning = false
    }

    // MARK: - Driven and inspected by the test

    /// How many times `start()` / `stop()` were called.
    public var startCount: Int { calls.filter { $0 == .start }.count }
    public var stopCount: Int { calls.filter { $0 == .stop }.count }

    /// Calls `deliver` with the delegate, synchronously, if the manager is running and its
    /// delegate is still alive, as the manager does with each event (`$0.locationManager(…,
    /// didUpdate: …)`); returns whether a delegate received it (`false` after `stop()`, or when
    /// nobody kept the delegate alive).
    @discardableResult
    public func send(_ deliver: (Delegate) -> Void) -> Bool {
        guard isRunning, let delegate else { return false }
        deliver(delegate)
        return true
    }
}

extension FakeDelegateSource where Delegate: FakeSourceDelegate {
    public typealias Event = Delegate.Event

    /// Delivers `event` to the delegate, synchronously, if the manager is running and its
    /// delegate is still alive; returns whether a delegate received it (`false` after `stop()`,
    /// or when nobody kept the delegate alive).
    @discardableResult
    public func yield(_ event: Event) -> Bool {
        send { $0.source(didReceive: event) }
    }

    /// Reports `error` to the delegate and stops running, as a manager that failed does;
    /// returns whether a delegate heard of it.
    @discardableResult
    public func finish(throwing error: any Error) -> Bool {
        guard isRunning, let delegate else { return false }
        isRunning = false
        delegate.source(didFailWith: error)
        return true
    }
}
