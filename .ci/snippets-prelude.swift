// The app around the docs' snippets (.ci/check-snippets.py): a Swift 6 app over the legacy SDK of
// Tests/LegacySDK (Swift 5, classes never made Sendable, a manager with a weak delegate). A
// snippet marked `body` is pasted into a method of `AppModel`, `members` into its body, `test`
// into a method of `TestBench`, `legacy-body`/`legacy-members` into `LegacyAppModel` (the
// app's Swift 5 code before the migration). The names below are the ones the docs use.
import Bridges
import BridgesCombine
import BridgesTesting
import Foundation
import LegacySDK
import OpenCombine
import Observation

#if canImport(FoundationNetworking)
@_exported import FoundationNetworking
#endif
#if canImport(FoundationXML)
@_exported import FoundationXML
#endif

public struct Item: Equatable, Sendable, Identifiable {
    public let id: Int
    public init(id: Int) { self.id = id }
}

public struct Row: Sendable {}
public struct UserProfile: Sendable {
    public let name: String
    public init(name: String) { self.name = name }
}
public struct Event: Sendable {}
public typealias ID = String

public enum LookupError: Error { case missingID }

/// A legacy feed of titles (Combine).
public final class TitleFeed {
    public let titles = PassthroughSubject<String, Never>()
    public init() {}
}

extension Notification.Name {
    public static let didSave = Notification.Name("didSave")
}

/// The app's own async API (written in Swift 6, so `Sendable`).
public final class API: Sendable {
    public init() {}
    public func load() async throws -> [Item] { [] }
    public func loadItems() async throws -> [Item] { [] }
    public func loadUser() async throws -> UserProfile { UserProfile(name: "Ada") }
    public func load(completion: @escaping @Sendable (Result<[Item], any Error>) -> Void) {}
    public func start(completion: @escaping @Sendable (Result<[Item], any Error>) -> Void) -> Cancellation {
        Cancellation {}
    }
}

/// A repository whose items change over time (a remote feed: it can fail).
public final class ItemsFacade: Sendable {
    public init() {}
    public var items: CallbackStream<[Item], any Error> {
        CallbackStream { sink in Cancellation {} }
    }
}

/// A Combine-era store.
public final class ItemsStore {
    public let items = CurrentValueSubject<[Item], Never>([])
    public init() {}
}

public final class LoginForm {
    public let isValid = CurrentValueSubject<Bool, Never>(false)
    public init() {}
}

public final class Button {
    public var isEnabled = false
    public init() {}
}

public final class Label {
    public var text = ""
    public init() {}
}

/// A socket with a stream of events.
public final class Socket: Sendable {
    public init() {}
    public var events: CallbackStream<Event, Never> { CallbackStream { sink in Cancellation {} } }
}

/// An event source that can pause (a file, a socket), fed by a stream's sink.
public final class ChunkSource: @unchecked Sendable {
    public var onChunk: (@Sendable (Data) -> Void)?
    public init() {}
    public func pause() {}
    public func resume() {}
    public func cancel() {}
}

/// A delegate for the legacy manager that forwards to a stream's sink, on Bridges' base class.
public final class LocationDelegate: DelegateProxy<Location, any Error>, LegacyLocationDelegate, @unchecked Sendable {
    public func locationManager(_ manager: LegacyLocationManager, didUpdate location: Location) {
        sink.yield(location)
    }
    public func locationManager(_ manager: LegacyLocationManager, didFailWithError error: Error) {
        sink.finish(throwing: error)
    }
}

/// The same delegate as a plain class of the app's own.
public final class LocationForwarder: LegacyLocationDelegate {
    let sink: CallbackStream<Location, any Error>.Sink
    public init(_ sink: CallbackStream<Location, any Error>.Sink) { self.sink = sink }
    public func locationManager(_ manager: LegacyLocationManager, didUpdate location: Location) {
        sink.yield(location)
    }
    public func locationManager(_ manager: LegacyLocationManager, didFailWithError error: Error) {
        sink.finish(throwing: error)
    }
}

/// An `@Observable` model (Observation).
@MainActor @Observable public final class SearchModel {
    public var query = ""
    public init() {}
}

/// An observation of rows that fails or changes (a database query).
public final class RowsObservation: Sendable {
    public func cancel() {}
}

public struct AppLog: Sendable {
    public func error(_ message: String) {}
}

public final class Cache {
    public var isStale = false
    public func reset() {}
    public init() {}
}

/// The app's `@MainActor` view model, over the legacy SDK.
@MainActor open class AppModel {
    public let client = LegacyUserClient()
    public let weather = LegacyWeatherClient()
    public let manager = LegacyLocationManager()
    public let session = URLSession.shared
    public let url = URL(string: "https://example.com/user/42")!
    public let id = 42
    public var selectedID: Int? = 42
    public let api = API()
    public let facade = ItemsFacade()
    public let store = ItemsStore()
    public let form = LoginForm()
    public let button = Button()
    public let label = Label()
    public let socket = Socket()
    public let source = ChunkSource()
    public let center = NotificationCenter.default
    public let model = SearchModel()
    public let pipe = Pipe()
    public let bag = CancellationBag()
    public let callbackQueue = DispatchQueue(label: "callbacks")
    public let clock = ContinuousClock()
    public let weatherClient = WeatherClient()
    public let cache = Cache()
    public let log = AppLog()
    public var cancellables: Set<AnyCancellable> = []
    public var token: Cancellation?
    public var items: [Item] = []
    public var title = ""
    public var results: [String] = []
    public var error: (any Error)?
    public var user: User?

    public init() {}

    /// The manager's updates as a stream, written once in the app (see `LocationDelegate`).
    public var locationUpdates: CallbackStream<Location, any Error> {
        CallbackStream(buffering: .latest) { [manager] sink in
            let proxy = LocationDelegate(sink)
            manager.delegate = proxy
            manager.start()
            return Cancellation {
                manager.stop()
                manager.delegate = nil
                _ = proxy
            }
        }
    }

    public var updates: CallbackStream<Int, Never> { CallbackStream { sink in Cancellation {} } }
    public var feed: CallbackStream<String, Never> { CallbackStream { sink in Cancellation {} } }
    public var queries: CallbackStream<String, Never> { CallbackStream { sink in Cancellation {} } }
    public var searchText: CallbackStream<String, Never> { CallbackStream { sink in Cancellation {} } }

    public var itemStream: CallbackStream<Item, Never> { CallbackStream { sink in Cancellation {} } }


    public func load() async throws -> [Item] { [] }
    public func fetchTitle() async throws -> String { "" }
    public func avatar() async throws -> Data { Data() }
    public func render<T>(_ value: T) {}
}

// What the app does with values (nonisolated, so that any closure may call them).
public func search(_ query: String) async -> [String] { [] }
public func upload(_ chunk: Data) async {}
public func show<T>(_ value: T) {}
public func render<T>(_ value: T) {}
public func record<T>(_ value: T) {}
public func refresh<T>(_ value: T) {}
public func observe(
    onChange: @escaping @Sendable ([Row]) -> Void, onError: @escaping @Sendable (any Error) -> Void
) -> RowsObservation { RowsObservation() }


public final class LegacySearchModel: ObservableObject {
    @Published public var query = ""
    public init() {}
}

public final class LegacyItemsFacade {
    public let items = CurrentValueSubject<[Item], Never>([])
    public init() {}
}

public final class LegacyTitleAPI {
    public init() {}
    public func fetch(completion: @escaping (Result<String, Error>) -> Void) {}
}

/// The SDK's network layer (MIGRATION's `WeatherClient` declaration calls it).
public final class WeatherTransport {
    private let client = WeatherClient()
    public init() {}
    public func get(
        _ path: String, completion: @escaping (Result<Forecast, WeatherError>) -> Void
    ) -> WeatherRequest {
        client.forecast(for: path, completion: completion)
    }
}

/// The same app's code before the migration: Swift 5, Combine, completion handlers.
open class LegacyAppModel {
    public let client = LegacyUserClient()
    public let store = ItemsStore()
    public let center = NotificationCenter.default
    public let searchText = PassthroughSubject<String, Never>()
    public let queries = PassthroughSubject<String, Never>()
    public let model = LegacySearchModel()
    public let facade = LegacyItemsFacade()
    public let api = LegacyTitleAPI()
    public let queue = DispatchQueue(label: "loading")
    public var cancellables: Set<AnyCancellable> = []
    public var token: NSObjectProtocol?
    public let feed = TitleFeed()
    public let profile = User(id: 42, name: "Ada")
    public var user: User?
    public var avatar: Data?
    public var cancelAvatar: (() -> Void)?
    public var title = ""

    public init() {}

    public func search(_ query: String) -> AnyPublisher<[String], Never> { Just([]).eraseToAnyPublisher() }
    public func render<T>(_ value: T) {}
    public func refresh<T>(_ value: T) {}
    public func legacyFetch(_ completion: @escaping (Data?, Error?) -> Void) {}
}

/// A presenter that searches `api` for what is sent to `searchText`, 300 ms after typing stops.
@MainActor public final class SearchPresenter {
    public let searchText = ProcessingChannel<String>()
    public init(api: FakeCompletionAPI<String, [String]>, clock: some Clock<Duration>) {}
}

/// A presenter that shows `items` on `view`.
@MainActor public final class Presenter {
    public init(items: ProcessingChannel<[Item]>, view: ItemsView) {}
    public func remove(_ item: Item) {}
}

@MainActor public final class ItemsView {
    public var updatedItems: [Item] = []
    public init() {}
}

@MainActor public final class LoginViewModel {
    public init() {}
    public func start() async {}
}

public final class ItemsStoreFacade: Sendable {
    public var items: [Item] { [] }
    public init() {}
}

/// The delegate proxy of `FakeDelegateSource`'s documentation.
public final class Readings: DelegateProxy<Int, any Error>, FakeSourceDelegate, @unchecked Sendable {
    public func source(didReceive event: Int) { _ = sink.yield(event) }
    public func source(didFailWith error: any Error) { sink.finish(throwing: error) }
}

/// A test's surroundings: fakes, a virtual clock, values to send, a presenter under test.
@MainActor open class TestBench {
    public let api = FakeCompletionAPI<String, [String]>()
    public let clock = TestClock()
    public let shoe = Item(id: 1)
    public let item = Item(id: 2)
    public let input = [Item(id: 3)]
    public let paris = Location(latitude: 48.8566, longitude: 2.3522)
    public let view = ItemsView()
    public let facade = ItemsStoreFacade()
    public let presenter: Presenter
    public let source = Broadcast<Int>()
    public let stream: CallbackStream<Int, Never>
    public init() {
        presenter = Presenter(items: ProcessingChannel(), view: view)
        stream = source.stream(buffering: .unbounded)
    }
}
