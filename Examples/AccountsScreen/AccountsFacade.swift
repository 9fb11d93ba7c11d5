#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif
import Bridges
import Foundation

public struct Account: Sendable, Equatable, Identifiable, CustomStringConvertible {
    public var id: String
    public var name: String
    public var balance: Decimal
    public init(id: String, name: String, balance: Decimal) { self.id = id; self.name = name; self.balance = balance }
    public var description: String { name }
}

/// The bank's backend as it has been for years: completion handlers, called on some thread,
/// returning a token that cancels the request.
public protocol AccountsBackend: Sendable {
    func fetchAccounts(completion: @escaping @Sendable (Result<[Account], any Error>) -> Void) -> Cancellation
    func deleteAccount(_ id: String, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) -> Cancellation
}

#if canImport(Combine) || OpenCombine
/// The facade the screens use: state as a publisher, commands as async
/// functions. It answers what `load(completion:)` left open: results arrive through `accounts`
/// (any thread, any number of times), a command either finishes or throws, and may be cancelled.
public protocol AccountsFacade: Sendable {
    /// The current accounts, then every change. Never fails.
    var accounts: AnyPublisher<[Account], Never> { get }
    /// Fetches the accounts and publishes them; throws `BridgeError.timedOut` after 10 s.
    func load() async throws
    /// Deletes an account and publishes the list without it.
    func remove(_ id: String) async throws
}

/// A class, not an actor: its only state is the subject, which is thread-safe. (As an actor it
/// also works, but `runUntilIdle()` does not reliably wait for a default actor's jobs: see the
/// example's README.)
@available(BridgesClock, *)  // Clock, BridgeTimeout.after
public final class BankAccountsFacade: AccountsFacade {
    private let backend: any AccountsBackend
    private let timeout: BridgeTimeout
    private let state = AccountsSubject()
    private let observers = ExampleCounter()

    public init<C: Clock<Duration>>(backend: any AccountsBackend, clock: C) {
        self.backend = backend
        self.timeout = .after(.seconds(10), on: clock)
    }

    public var accounts: AnyPublisher<[Account], Never> {
        let observers = observers
        return state.subject
            .handleEvents(receiveSubscription: { _ in observers.add(1) }, receiveCancel: { observers.add(-1) })
            .eraseToAnyPublisher()
    }

    /// How many subscribers `accounts` has now (to check that screens let go).
    public var observerCount: Int { observers.value }

    public func load() async throws {
        let accounts = try await withCallback(timeout: timeout) { done in backend.fetchAccounts(completion: done) }
        state.subject.send(accounts)
    }

    public func remove(_ id: String) async throws {
        try await withCallback(timeout: timeout) { done in backend.deleteAccount(id, completion: done) }
        state.subject.send(state.subject.value.filter { $0.id != id })
    }
}

/// Combine's subjects lock internally and may be used from any thread, but are not declared
/// `Sendable`; this box says so, once. Only `send`, `value` and subscribing are used.
final class AccountsSubject: @unchecked Sendable {
    let subject = CurrentValueSubject<[Account], Never>([])
}
#endif

/// A thread-safe counter.
final class ExampleCounter: @unchecked Sendable {  // every access takes `lock`
    private let lock = NSLock()
    private var count = 0
    func add(_ n: Int) { lock.withLock { count += n } }
    var value: Int { lock.withLock { count } }
}
