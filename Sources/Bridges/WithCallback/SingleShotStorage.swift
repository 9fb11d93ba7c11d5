/// What a bridge is created with: the optional late-result handler and the call site.
@usableFromInline
struct SingleShotHeader<Success, Failure: Error> {
    @usableFromInline let onLateResult: (@Sendable (Result<Success, Failure>) -> Void)?
    @usableFromInline let site: CallSite

    @inlinable
    init(onLateResult: (@Sendable (Result<Success, Failure>) -> Void)?, site: CallSite) {
        self.onLateResult = onLateResult
        self.site = site
    }
}

/// ``SingleShotStateMachine`` + acting on its actions, in one allocation with no lock of its own.
///
/// Every method takes the object's lock (from `_StripedLocks`: no mutex to allocate, init or
/// destroy per bridge) only to run one event of the state machine, then resumes continuations,
/// runs `Cancellation`s and calls `onLateResult` after releasing it. `onLateResult` and `site`
/// are immutable, so they are read without the lock, and only on the paths that use them.
@usableFromInline
final class SingleShotStorage<Success: Sendable, Failure: Error>: @unchecked Sendable {
    // @unchecked Sendable: `machine` is read and written only with this object's striped lock
    // held; the other fields are immutable; the results that cross threads are required to be
    // Sendable by the public entry points.
    @usableFromInline @exclusivity(unchecked) var machine = SingleShotStateMachine<Success, Failure>()
    @usableFromInline let onLateResult: (@Sendable (Result<Success, Failure>) -> Void)?
    @usableFromInline let site: CallSite

    @inlinable
    init(_ header: SingleShotHeader<Success, Failure>) {
        onLateResult = header.onLateResult
        site = header.site
    }

    /// The spelling `_withCallbackCore` uses.
    @inlinable
    static func create(_ header: SingleShotHeader<Success, Failure>) -> SingleShotStorage {
        SingleShotStorage(header)
    }

    /// Runs one event of the state machine under the lock.
    @inlinable
    func withLock<R>(_ body: (inout SingleShotStateMachine<Success, Failure>) -> R) -> R {
        _StripedLocks.withLock(for: self) { body(&machine) }
    }

    @inlinable
    func _start(_ continuation: UnsafeContinuation<Result<Success, Failure>, any Error>) -> Bool {
        switch withLock({ $0.start(continuation) }) {
        case .runBody:
            return true
        case .resumeCancelled(let continuation):
            continuation.resume(throwing: CancellationError())
            return false
        }
    }

    @inlinable
    func _bodyReturned(_ cancellation: Cancellation?, _: Result<Success, Failure>.Type) {
        withLock { $0.bodyReturned(cancellation) }?.cancel()
    }

    @inlinable
    func _bodyThrew(_ error: any Error, _: Result<Success, Failure>.Type) {
        withLock { $0.bodyThrew() }?.resume(throwing: error)
    }

    @inlinable
    func _callback(_ result: Result<Success, Failure>) {
        switch withLock({ $0.callback(result) }) {
        case .resume(let continuation, let result, let timeout, let retired):
            timeout?.cancel()
            continuation.resume(returning: result)
            withExtendedLifetime(retired) {}  // the token, no longer needed, released outside the lock
        case .deliverLate(let result):
            onLateResult?(result)
        case .reportSecondCall(let report):
            if report {
                site.report(
                    .callbackCalledTwice,
                    "the completion handler was called again after it had completed the bridge; the extra call was ignored",
                    bridge: self
                )
            }
        }
    }

    @inlinable
    func _interrupt(timedOut: Bool, _: Result<Success, Failure>.Type) {
        switch withLock({ $0.interrupt(timedOut: timedOut) }) {
        case .none:
            break
        case .resume(let continuation, let legacy, let timeout):
            timeout?.cancel()
            // The legacy call is cancelled *before* the task resumes, so code after the `catch`
            // can rely on it. The state already says "cancelled", so a callback that the cancel
            // fires synchronously is treated as a late result.
            legacy?.cancel()
            continuation.resume(throwing: timedOut ? BridgeError.timedOut : CancellationError())
        }
    }

    @inlinable
    func _callbackReleased(_: Result<Success, Failure>.Type) {
        if case .resumeDropped(let continuation, let timeout, let retired) = withLock({ $0.callbackReleased() }) {
            withExtendedLifetime(retired) {}  // no longer needed; released outside the lock
            timeout?.cancel()
            site.report(
                .callbackDropped,
                "the legacy API released its completion handler without calling it; the awaiting task throws BridgeError.callbackDropped",
                bridge: nil  // once per bridge by construction, and reported from the callback's deinit
            )
            continuation.resume(throwing: BridgeError.callbackDropped)
        }
    }
}

/// Holds the storage for the completion handler handed to the legacy API, and tells the bridge
/// when the legacy API released that handler without calling it.
@usableFromInline
final class CallbackBox<Success: Sendable, Failure: Error>: Sendable {
    @usableFromInline let storage: SingleShotStorage<Success, Failure>
    /// Built in the inlinable `init`, so it is specialised in the caller: a class's `deinit`
    /// always runs unspecialised, and calling the generic storage from it cost three runtime
    /// metadata look-ups per bridge (callgrind: 6 436 → 5 183 instructions per call).
    @usableFromInline let released: @Sendable () -> Void

    @inlinable
    init(_ storage: SingleShotStorage<Success, Failure>) {
        self.storage = storage
        self.released = { storage._callbackReleased(Result<Success, Failure>.self) }
    }

    @inlinable
    func callAsFunction(_ result: Result<Success, Failure>) { storage._callback(result) }

    deinit { released() }
}
