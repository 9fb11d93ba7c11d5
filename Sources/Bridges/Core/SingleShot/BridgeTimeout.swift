/// How long a bridge waits for its legacy callback, and on which clock.
///
/// The clock is erased so that every bridge takes one optional `timeout:` parameter; pass a test
/// clock from `BridgesTesting` to drive it with virtual time:
///
/// <!-- snippet: body — in a method of a `@MainActor` view model with `api` and a `clock` -->
/// ```swift
/// let items = try await withCallback(timeout: .after(.seconds(5))) { done in api.load(completion: done) }
/// let again = try await withCallback(timeout: .after(.seconds(5), on: clock)) { done in api.load(completion: done) }
/// ```
///
/// When the timeout elapses the awaiting task throws ``BridgeError/timedOut`` and the
/// `Cancellation` returned by the body runs, exactly as for task cancellation.
///
/// Inject the clock as an existential (a `ContinuousClock` in the app, a `TestClock` in its
/// tests), or inject the timeout itself, which also serves clocks and schedulers of other kinds
/// (``custom(_:sleep:)``):
/// <!-- snippet: body — in a method of a `@MainActor` view model with `api` and a `clock` -->
/// ```swift
/// let injected: any Clock<Duration> = clock           // a TestClock in the tests
/// let items = try await withCallback(timeout: .after(.seconds(5), on: injected)) { done in api.load(completion: done) }
/// let timeout: BridgeTimeout = .after(.seconds(5), on: clock)
/// let again = try await withCallback(timeout: timeout) { done in api.load(completion: done) }
/// ```
public struct BridgeTimeout: Sendable, CustomStringConvertible {
    @usableFromInline let sleep: @Sendable () async throws -> Void
    public let description: String
    /// How long it waits, for messages ("within 2.0 seconds"): the duration, or a custom
    /// timeout's description.
    let span: String

    /// Waits `duration` on `clock`.
    @available(BridgesClock, *)
    public static func after<C: Clock>(_ duration: C.Duration, on clock: C) -> BridgeTimeout {
        BridgeTimeout(
            sleep: { try await clock.sleep(for: duration) }, description: "timeout after \(duration)",
            span: "\(duration)")
    }

    /// Waits `duration` on a clock injected as an existential (`let clock: any Clock<Duration>`,
    /// a `ContinuousClock` in the app and a `TestClock` in its tests).
    @available(BridgesClock, *)
    public static func after(_ duration: Duration, on clock: any Clock<Duration>) -> BridgeTimeout {
        BridgeTimeout(
            sleep: { try await clock.sleep(for: duration) }, description: "timeout after \(duration)",
            span: "\(duration)")
    }

    /// Waits `duration` on the continuous clock.
    @available(BridgesClock, *)
    public static func after(_ duration: Duration) -> BridgeTimeout {
        after(duration, on: ContinuousClock())
    }

    /// A timeout that elapses when `sleep` returns: for clocks and schedulers of your own
    /// (and for OS versions before `Clock`).
    public static func custom(
        _ description: String, sleep: @escaping @Sendable () async throws -> Void
    ) -> BridgeTimeout {
        BridgeTimeout(sleep: sleep, description: description, span: description)
    }
}
