#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif
import Bridges
import BridgesCombine
import Foundation

/// What the screen shows. Implemented by the view controller (and by a fake in tests).
public protocol AccountsView: AnyObject, Sendable {
    func show(_ accounts: [Account])
    func showError(_ message: String)
}

#if canImport(Combine) || OpenCombine
/// The presenter: renders the facade's state and forwards the user's commands.
public final class AccountsPresenter: Sendable {
    private let facade: any AccountsFacade
    private let viewReference: WeakAccountsView
    private let bag = CancellationBag()
    private var view: (any AccountsView)? { viewReference.view }

    public init(facade: any AccountsFacade, view: any AccountsView) {
        self.facade = facade
        self.viewReference = WeakAccountsView(view: view)
    }

    // snippet:begin accountsScreen.after
    public func viewDidLoad() {
        facade.accounts.stream(buffering: .latest)
            .forEach(weak: self, in: bag) { owner, accounts in owner.view?.show(accounts) }
        reload()
    }
    // snippet:end accountsScreen.after

    public func reload() {
        let facade = facade
        runTask(weak: self, in: bag, operation: { try await facade.load() }, then: { owner, result in
            if case .failure(let error) = result { owner.view?.showError("Could not load accounts (\(error))") }
        })
    }

    /// Fire-and-forget, as the UI calls it: the deletion outlives this call, not the presenter.
    public func didSwipeToDelete(_ id: String) {
        let facade = facade
        runTask(weak: self, in: bag, operation: { try await facade.remove(id) }, then: { owner, result in
            if case .failure(let error) = result { owner.view?.showError("Could not delete (\(error))") }
        })
    }
}

/// The view, held weakly by a `Sendable` presenter. A stored `weak let` would say the same, but
/// it needs Swift 6.2.3 (Xcode 26.2), above the package's Swift 6.2.0 floor.
struct WeakAccountsView: Sendable {
    weak var view: (any AccountsView)?
}

/// The presenter as first written: `.values` in an unstructured `Task` that captures `self`.
/// The task holds the presenter until the publisher finishes (never), so every visit to the
/// screen leaks a presenter and a subscription, unless someone remembers to call `stop()`.
@available(BridgesCombineValues, *)  // Combine's `values`
public final class LeakyAccountsPresenter: @unchecked Sendable {  // `task` is written once, in viewDidLoad, before any other access
    private let facade: any AccountsFacade
    private weak var view: (any AccountsView)?
    private var task: Task<Void, Never>?

    public init(facade: any AccountsFacade, view: any AccountsView) {
        self.facade = facade
        self.view = view
    }

    // snippet:begin accountsScreen.before
    public func viewDidLoad() {
        task = Task {
            for await accounts in facade.accounts.values {
                self.view?.show(accounts)
            }
        }
    }
    // snippet:end accountsScreen.before

    public func stop() { task?.cancel() }
}
#endif
