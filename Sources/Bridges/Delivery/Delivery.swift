import Dispatch

/// Where a bridge back to callbacks calls your closures: a `DispatchQueue`, the main actor, or
/// wherever the work happened to finish.
///
/// <!-- snippet: members — of a `@MainActor` view model -->
/// ```swift
/// func load(completion: @escaping @Sendable (Result<[Item], any Error>) -> Void) -> Cancellation {
///     withCompletion(on: .queue(callbackQueue), completion) { try await self.api.load() }
/// }
/// func start() {
///     feed.subscribe(on: .mainActor) { self.label.text = $0 }.store(in: bag)
/// }
/// ```
///
/// - ``queue(_:)``: `queue.async { … }`. Callers that promised "the completion runs on the queue
///   you pass" keep that promise.
/// - ``mainActor``: on the main actor (the main thread), for UI code.
/// - ``current``: synchronously on the thread that decided the outcome: the task that finished
///   the work or produced the element, or the thread that called `cancel()`. The cheapest, and
///   what most completion-handler APIs did without saying so.
public struct Delivery: Sendable, CustomStringConvertible {
    @usableFromInline
    enum Kind: Sendable {
        case current
        case queue(DispatchQueue)
        case mainActor
    }

    @usableFromInline let kind: Kind

    @inlinable init(_ kind: Kind) { self.kind = kind }

    /// Calls back synchronously on whichever thread finished the work, delivered the element or
    /// cancelled. No hop at all.
    public static let current = Delivery(.current)

    /// Calls back on the main actor.
    public static let mainActor = Delivery(.mainActor)

    /// Calls back with `queue.async`. On a serial queue, calls keep their order.
    public static func queue(_ queue: DispatchQueue) -> Delivery { Delivery(.queue(queue)) }

    public var description: String {
        switch kind {
        case .current: "Delivery.current"
        case .queue(let queue): "Delivery.queue(\(queue.label))"
        case .mainActor: "Delivery.mainActor"
        }
    }

    /// Runs `body` in this context without waiting for it (the completion of one-shot work).
    @usableFromInline
    func perform(_ body: @escaping @Sendable () -> Void) {
        switch kind {
        case .current: body()
        case .queue(let queue): queue.async(execute: body)
        case .mainActor: Task { @MainActor in body() }
        }
    }

    /// Runs `body` in this context and waits until it has run: per-element delivery, so a slow
    /// consumer slows the loop down instead of piling elements up on the queue.
    @usableFromInline
    func performAndWait(_ body: @escaping @Sendable () -> Void) async {
        switch kind {
        case .current:
            body()
        case .queue(let queue):
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                queue.async {
                    body()
                    continuation.resume()
                }
            }
        case .mainActor:
            await MainActor.run { body() }
        }
    }
}

/// `on: .mainActor` for handlers that are themselves `@MainActor`: the overloads of `subscribe`
/// and `withCompletion` that take it accept `@MainActor` closures, so code in a `@MainActor`
/// type may set its state in them without `await`, `assumeIsolated` or warnings.
///
/// <!-- snippet: members — of a `@MainActor` view model -->
/// ```swift
/// func start() {
///     token = feed.subscribe(on: .mainActor) { item in self.title = item }
/// }
/// func load(completion: @escaping @MainActor (Result<[Item], any Error>) -> Void) -> Cancellation {
///     withCompletion(on: .mainActor, completion) { try await self.load() }
/// }
/// ```
///
/// You never name this type: `.mainActor` picks these overloads whenever the handler is (or may
/// be) main-actor isolated, and behaves like ``Delivery/mainActor`` otherwise.
public struct MainActorDelivery: Sendable, CustomStringConvertible {
    @inlinable init() {}

    /// Calls back on the main actor, with handlers typed `@MainActor`.
    public static let mainActor = MainActorDelivery()

    public var description: String { "Delivery.mainActor" }
}
