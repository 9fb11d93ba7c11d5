#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif
import Bridges
import ExampleTesting
import Foundation

/// The backend in this example (and its test): two controllable fakes.
public struct FakeAccountsBackend: AccountsBackend {
    public let fetches = FakeCompletionAPI<Void, [Account]>()
    public let deletes = FakeCompletionAPI<String, Void>()
    public init() {}
    public func fetchAccounts(completion: @escaping @Sendable (Result<[Account], any Error>) -> Void) -> Cancellation {
        fetches.call(completion: completion)
    }
    public func deleteAccount(_ id: String, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) -> Cancellation {
        deletes.call(id, completion: completion)
    }
}

/// A view that records what it was asked to show.
public final class RecordingAccountsView: AccountsView {
    private let state = ExampleLocked((shown: [[Account]](), errors: [String]()))
    public init() {}
    public func show(_ accounts: [Account]) { state.update { $0.shown.append(accounts) } }
    public func showError(_ message: String) { state.update { $0.errors.append(message) } }
    public var shown: [[Account]] { state.update { $0.shown } }
    public var errors: [String] { state.update { $0.errors } }
}

public let checking = Account(id: "chk", name: "Checking", balance: 1_250)
public let savings = Account(id: "sav", name: "Savings", balance: 8_400)

/// What a run of the example observed: checked by `main` and by ExamplesTests.
public struct AccountsScreenReport: Sendable {
    public var shownAfterLoad: [[Account]] = []
    public var deleteRequest: String?
    public var shownAfterDelete: [[Account]] = []
    public var errorsAfterTimeout: [String] = []
    public var timedOutRequestCancelled = false
    public var presenterReleased = false
    public var observersAfterRelease = -1
    public var leakyPresenterReleased = true
    public var observersWhileLeaking = -1
    public var leakyReleasedAfterStop = false
}

#if canImport(Combine) || OpenCombine
@available(BridgesClock, *)  // TestClock
public func runAccountsScreen(log: @Sendable (String) -> Void = { print($0) }) async throws -> AccountsScreenReport {
    var report = AccountsScreenReport()
    let backend = FakeAccountsBackend()
    let clock = TestClock()
    let facade = BankAccountsFacade(backend: backend, clock: clock)
    let view = RecordingAccountsView()
    try await withSerialTasks {
        var presenter: AccountsPresenter? = AccountsPresenter(facade: facade, view: view)
        presenter?.viewDidLoad()
        await runUntilIdle()
        try await backend.fetches.nextInvocation().complete(with: [checking, savings])
        await runUntilIdle()
        report.shownAfterLoad = view.shown
        log("after load: \(view.shown)")

        presenter?.didSwipeToDelete(savings.id)           // fire-and-forget
        await runUntilIdle()
        let deletion = try await backend.deletes.nextInvocation()
        report.deleteRequest = deletion.request
        deletion.complete(with: ())
        await runUntilIdle()
        report.shownAfterDelete = view.shown
        log("after deleting \(deletion.request): \(view.shown.last ?? [])")

        presenter?.reload()                                // the backend never answers
        await runUntilIdle()
        let stuck = try await backend.fetches.nextInvocation()
        await clock.advance(by: .seconds(10))
        await runUntilIdle()
        report.errorsAfterTimeout = view.errors
        report.timedOutRequestCancelled = stuck.isCancelled
        log("reload timed out on virtual time: \(view.errors), request cancelled: \(stuck.isCancelled)")

        weak var released: AnyObject?
        released = presenter
        presenter = nil
        await runUntilIdle()
        report.presenterReleased = released == nil
        report.observersAfterRelease = facade.observerCount
        log("presenter released: \(released == nil), facade observers left: \(facade.observerCount)")

        // The first version of the presenter, for comparison.
        var leaky: LeakyAccountsPresenter? = LeakyAccountsPresenter(facade: facade, view: RecordingAccountsView())
        leaky?.viewDidLoad()
        await runUntilIdle()
        weak var leaked: LeakyAccountsPresenter?
        leaked = leaky
        leaky = nil
        await runUntilIdle()
        report.leakyPresenterReleased = leaked == nil
        report.observersWhileLeaking = facade.observerCount
        leaked?.stop()                                     // the call everyone forgets
        await runUntilIdle()
        report.leakyReleasedAfterStop = leaked == nil
        log("Task + .values presenter released: \(report.leakyPresenterReleased) (observers: \(report.observersWhileLeaking)); after stop(): \(report.leakyReleasedAfterStop)")
    }
    return report
}
#endif

/// A value behind a lock.
final class ExampleLocked<Value>: @unchecked Sendable {  // every access takes `lock`
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func update<R>(_ body: (inout Value) -> R) -> R { lock.withLock { body(&value) } }
}
