#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif
import Bridges
import ExampleTesting

/// One search screen test, written once and run against both view models: it types, moves
/// virtual time, publishes catalogs, and finally releases the model.
public protocol SearchScreenHarness {
    associatedtype Model: SearchScreenModel
    var model: Model? { get }
    /// Runs the test body in the context the implementation needs (serial tasks for async).
    func run(_ body: () async throws -> Void) async rethrows
    func publishCatalog(_ movies: [Movie]) async
    func type(_ text: String) async
    func advance(milliseconds: Int) async
    /// Releases the model; returns whether it was deallocated and its pipeline stopped listening
    /// to the catalog.
    func release() async -> (deallocated: Bool, catalogReleased: Bool)
}

/// The async model on a `TestClock`, inside `withSerialTasks` so `runUntilIdle()` can settle the
/// pipeline's tasks after each step.
@available(BridgesTypedSequence, *)  // AsyncSearchModel
public final class AsyncSearchHarness: SearchScreenHarness {
    public private(set) var model: AsyncSearchModel?
    private let clock = TestClock()
    private let catalog = AsyncStream.makeStream(of: [Movie].self)
    private let catalogEnded = ExampleLockedValue(false)

    public init() {}

    public func run(_ body: () async throws -> Void) async rethrows {
        try await withSerialTasks {
            let ended = catalogEnded
            catalog.continuation.onTermination = { _ in ended.update { $0 = true } }
            model = AsyncSearchModel(catalog: catalog.stream, clock: clock)
            await runUntilIdle()
            try await body()
        }
    }

    public func publishCatalog(_ movies: [Movie]) async {
        catalog.continuation.yield(movies)
        await runUntilIdle()
    }

    public func type(_ text: String) async {
        model?.setSearchText(text)
        await runUntilIdle()
    }

    public func advance(milliseconds: Int) async { await clock.advance(by: .milliseconds(milliseconds)) }

    public func release() async -> (deallocated: Bool, catalogReleased: Bool) {
        weak var released: AnyObject?
        released = model
        model = nil
        await runUntilIdle()
        await clock.expectNoPendingSleepers()
        return (released == nil, catalogEnded.update { $0 })
    }
}

#if canImport(Combine) || OpenCombine
/// The Combine model on a ``VirtualTimeScheduler``: everything runs synchronously on the test's
/// task, so no settling is needed.
public final class CombineSearchHarness: SearchScreenHarness {
    public private(set) var model: CombineSearchModel<VirtualTimeScheduler>?
    private let scheduler = VirtualTimeScheduler()
    private let catalog = PassthroughSubject<[Movie], Never>()
    private var catalogCancelled = false

    public init() {}

    public func run(_ body: () async throws -> Void) async rethrows {
        let observed = catalog.handleEvents(receiveCancel: { [unowned self] in catalogCancelled = true })
        model = CombineSearchModel(catalog: observed.eraseToAnyPublisher(), scheduler: scheduler)
        try await body()
    }

    public func publishCatalog(_ movies: [Movie]) async { catalog.send(movies) }
    public func type(_ text: String) async { model?.setSearchText(text) }
    public func advance(milliseconds: Int) async { scheduler.advance(by: .milliseconds(milliseconds)) }

    public func release() async -> (deallocated: Bool, catalogReleased: Bool) {
        weak var released: AnyObject?
        released = model
        model = nil
        return (released == nil, catalogCancelled)
    }
}
#endif
