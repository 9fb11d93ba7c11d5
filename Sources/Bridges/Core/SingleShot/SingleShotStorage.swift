/// What a bridge is created with: the optional late-result handler, the call site, and the
/// function its `deinit` calls.
@usableFromInline
struct SingleShotHeader<Success: Sendable, Failure: Error> {
    @usableFromInline let onLateResult: (@Sendable (Result<Success, Failure>) -> Void)?
    @usableFromInline let site: CallSite
    /// Built in the inlinable `make`, so it is specialised in the caller: a class's `deinit`
    /// always runs unspecialised, and calling the generic storage from it would pay runtime
    /// metadata look-ups per bridge. It captures nothing (it is handed the storage), so it
    /// allocates nothing once specialised.
    @usableFromInline let released: (SingleShotStorage<Success, Failure>) -> Void
    /// The object's stripe (``Lock/stripe(for:)``), looked up once (the look-up reads a lazily
    /// initialised global).
    @usableFromInline let lock: UnsafeMutablePointer<PlatformLock>
    /// Set when the frame itself noticed that the handler was released (it held the last
    /// reference, see `_bodyReturned(_:handlerReleased:)`), so the `deinit` has nothing to do.
    /// Written only then, by the thread that then releases the object and so runs the `deinit`;
    /// in every other case it is never written after creation.
    @usableFromInline var releaseNoticed = false

    @inlinable
    init(
        onLateResult: (@Sendable (Result<Success, Failure>) -> Void)?,
        site: CallSite,
        released: @escaping (SingleShotStorage<Success, Failure>) -> Void,
        lock: UnsafeMutablePointer<PlatformLock>
    ) {
        self.onLateResult = onLateResult
        self.site = site
        self.released = released
        self.lock = lock
    }
}

/// One `withCallback` bridge in ONE allocation: the completion handler's context, the
/// ``SingleShotStateMachine`` and acting on its actions, with no lock of its own.
///
/// **Who holds it.** While the task awaits, its *strong* references are exactly the copies of
/// the completion handler handed to the legacy API (the handler's closure captures only this
/// object, so the object is the closure's context: no box of its own). So `deinit` means "every
/// copy of the handler was released", which is how a dropped handler is noticed. The awaiting
/// frame holds a strong reference only until the body has returned: then, if that reference is
/// the last one (the legacy API called back, or dropped the handler, before the body returned),
/// the frame ends the handler's life itself in the same lock as "body returned" and keeps the
/// object to the end; otherwise it gives its reference up and keeps only the *memory* valid,
/// through Swift's unowned reference count (``SingleShotAnchor``), which outlives the `deinit`:
/// the runtime frees the allocation only when both counts are zero. The cancellation handler
/// and the timeout's task reach the state through a ``SingleShotFrame`` (raw addresses).
///
/// **Why the state is never destroyed by the `deinit`.** The state machine lives in the tail
/// element of this `ManagedBuffer`, which the class never destroys on its own, so the frame can
/// still take the lock and read it after the `deinit` (it finds a terminal state: the `deinit`
/// ended the bridge as dropped, or it had already ended). By the time the last of the frame and
/// the handler lets go, the frame has taken the outcome (a result kept for it, if the callback
/// came before it suspended) and every event that ends the bridge has moved the token and the
/// timeout out of the state (`SingleShotStateMachine.isSpent`, asserted when the frame ends),
/// so there is nothing left in it to destroy. The header (`onLateResult`, the call site) is immutable
/// but for `releaseNoticed`, destroyed by the `deinit` and read only from the handler's paths,
/// which cannot run after it, and by the frame while it still holds its strong reference.
///
/// Every event takes the object's lock (a stripe, ``Lock/stripe(for:)``: no mutex to allocate, init or
/// destroy per bridge) only to run one event of the state machine, then resumes continuations,
/// runs `Cancellation`s and calls `onLateResult` after releasing it.
@usableFromInline
final class SingleShotStorage<Success: Sendable, Failure: Error>:
    ManagedBuffer<SingleShotHeader<Success, Failure>, SingleShotStateMachine<Success, Failure>>
{
    // Not `Sendable` (a `ManagedBuffer` never is): `_completionHandler` says why sharing it
    // is safe.

    /// A bridge, with no lock of its own to initialise.
    @inlinable
    static func make(
        onLateResult: (@Sendable (Result<Success, Failure>) -> Void)?,
        site: CallSite
    ) -> SingleShotStorage {
        let buffer = create(minimumCapacity: 1) { buffer in
            SingleShotHeader(
                onLateResult: onLateResult, site: site, released: { $0._callbackReleased() },
                lock: Lock.stripe(for: UnsafeRawPointer(Unmanaged.passUnretained(buffer).toOpaque()))
            )
        }
        // `ManagedBuffer.create` returns an instance of the class it is called on.
        let storage = unsafeDowncast(buffer, to: SingleShotStorage.self)
        storage.withUnsafeMutablePointerToElements { $0.initialize(to: SingleShotStateMachine()) }
        return storage
    }

    /// The awaiting side's view: the addresses of the state and of the lock.
    @inlinable
    var frame: SingleShotFrame<Success, Failure> {
        withUnsafeMutablePointers { header, machine in SingleShotFrame(machine: machine, header: header) }
    }

    // Through the header's address: `header` is a `var` of `ManagedBuffer`, and reading it here
    // would pay a dynamic exclusivity check (`swift_beginAccess`).
    deinit {
        withUnsafeMutablePointerToHeader { header in
            if !header.pointee.releaseNoticed { header.pointee.released(self) }
        }
    }

    /// Runs one event of the state machine under the lock.
    @inlinable
    func withLock<R>(_ body: (inout SingleShotStateMachine<Success, Failure>) -> R) -> R {
        withUnsafeMutablePointers { header, machine in
            Lock(stripe: header.pointee.lock, for: header).withLock { body(&machine.pointee) }
        }
    }

    /// A call of the completion handler.
    @inlinable
    func _callback(_ result: Result<Success, Failure>) {
        switch withLock({ $0.callback(result) }) {
        case .resume(let continuation, let result, let timeout, let retired):
            timeout?.cancel()
            continuation.resume(returning: result)
            withExtendedLifetime(retired) {}  // the token, no longer needed, released outside the lock
        case .stored(let retired):
            withExtendedLifetime(retired) {}  // the frame picks the result up; the token goes
        case .handLate(let result):
            header.onLateResult?(result)
        case .reportSecondCall(let report):
            if report {
                header.site.report(
                    .callbackCalledTwice,
                    "the completion handler was called again after it had completed the bridge; the extra call was "
                        + "ignored. Call it exactly once per operation: look for a second path that calls it (success then "
                        + "failure, a retry, a timer); an API that calls back many times (progress, updates) is a stream: "
                        + "bridge it with CallbackStream instead.",
                    bridge: self
                )
            }
        }
    }

    /// Every copy of the completion handler was released (from `deinit`, through the header).
    @inlinable
    func _callbackReleased() {
        _perform(withLock { $0.callbackReleased() })
    }

    /// The body returned, called by the frame while it still holds its strong reference.
    /// `handlerReleased`: that reference is the only one left, so every copy of `done` is gone
    /// (and none can appear): "handler released" is decided in the same lock as "body
    /// returned", and the `deinit` is told it has nothing left to do.
    @inlinable
    func _bodyReturned(
        _ cancellation: Cancellation?, handlerReleased: Bool
    ) -> SingleShotStateMachine<Success, Failure>.BodyAction {
        guard handlerReleased else { return withLock { $0.bodyReturned(cancellation) } }
        let (action, dropped) = withUnsafeMutablePointers { header, machine in
            Lock(stripe: header.pointee.lock, for: header).withLock {
                header.pointee.releaseNoticed = true
                return (machine.pointee.bodyReturned(cancellation), machine.pointee.callbackReleased())
            }
        }
        _perform(dropped)
        return action
    }

    @inlinable
    func _perform(_ action: SingleShotStateMachine<Success, Failure>.DroppedAction) {
        if case .dropped(let continuation, let timeout, let retired) = action {
            withExtendedLifetime(retired) {}  // no longer needed; released outside the lock
            timeout?.cancel()
            header.site.report(
                .callbackDropped,
                "the legacy API released its completion handler without calling it; the awaiting task throws "
                    + "BridgeError.callbackDropped instead of waiting forever. Make every path of the API call it "
                    + "once (errors, early returns, its own cancellation); if the API drops it when cancelled, return "
                    + "a Cancellation from the body, and pass timeout: if it may never answer.",
                bridge: nil  // once per bridge by construction, and reported when the last handler goes
            )
            // Not suspended yet: the frame finds the ending when it hands over its continuation.
            continuation?.resume(throwing: BridgeError.callbackDropped)
        }
    }
}

/// Keeps a ``SingleShotStorage``'s memory (not the object) valid: Swift's unowned count, which
/// the runtime checks before it frees an object whose `deinit` has run. Never loaded (a load
/// after the `deinit` traps); each holder keeps its copy alive with `withExtendedLifetime` for
/// as long as it touches the state. The frame takes one when it gives up its strong reference;
/// the timeout's task holds its own copy.
@usableFromInline
struct SingleShotAnchor<Success: Sendable, Failure: Error>: @unchecked Sendable {
    // @unchecked Sendable: never loaded, only held.
    @usableFromInline unowned let storage: SingleShotStorage<Success, Failure>

    @inlinable init(_ storage: SingleShotStorage<Success, Failure>) { self.storage = storage }
}

/// The awaiting side's view of a ``SingleShotStorage``: the address of its state and of its
/// header (which holds its lock), and no reference at all, so the completion handler's copies can be the object's only
/// owners. Valid while its holder keeps the object (the frame, until the body returned) or its
/// memory (a ``SingleShotAnchor``) alive.
///
/// Used by the awaiting frame, its cancellation handler and the timeout's task. Nothing here
/// retains the object strongly: a strong retain after the `deinit` began would be a
/// resurrection, which the runtime traps on.
@usableFromInline
struct SingleShotFrame<Success: Sendable, Failure: Error>: @unchecked Sendable {
    // @unchecked Sendable: the addresses stay valid while the holder keeps the object or its
    // memory alive, and the state behind them is read and written only with the lock held.
    @usableFromInline let machine: UnsafeMutablePointer<SingleShotStateMachine<Success, Failure>>
    /// Read only for its `lock`, which never changes after creation.
    @usableFromInline let header: UnsafeMutablePointer<SingleShotHeader<Success, Failure>>

    @inlinable
    init(
        machine: UnsafeMutablePointer<SingleShotStateMachine<Success, Failure>>,
        header: UnsafeMutablePointer<SingleShotHeader<Success, Failure>>
    ) {
        self.machine = machine
        self.header = header
    }

    /// Runs one event of the state machine under the lock (the object's stripe, which
    /// ThreadSanitizer knows by the header's address: nothing writes there after creation).
    @inlinable
    func withLock<R>(_ body: (inout SingleShotStateMachine<Success, Failure>) -> R) -> R {
        Lock(stripe: header.pointee.lock, for: header).withLock { body(&machine.pointee) }
    }

    /// The body threw: the result the legacy API gave inside the body, if any, else nil (the
    /// task throws the body's error).
    @inlinable
    func bodyThrew() -> Result<Success, Failure>? {
        withLock { $0.bodyThrew() }
    }

    /// Hands over the continuation; false when the bridge ended first (the task is resumed at once).
    @inlinable
    func handOver(_ continuation: UnsafeContinuation<Result<Success, Failure>, any Error>) -> Bool {
        switch withLock({ $0.handOver(continuation) }) {
        case .suspend:
            return true
        case .resume(let continuation, .result(let result)):
            continuation.resume(returning: result)
            return false
        case .resume(let continuation, .ended(let ending)):
            continuation.resume(throwing: ending.error)
            return false
        }
    }

    @inlinable
    func interrupt(timedOut: Bool) {
        if case .end(let continuation, let legacy, let timeout) = withLock({ $0.interrupt(timedOut: timedOut) }) {
            timeout?.cancel()
            // The legacy call is cancelled *before* the task resumes, so code after the `catch`
            // can rely on it. The state already says "cancelled", so a callback that the cancel
            // fires synchronously is treated as a late result.
            legacy?.cancel()
            continuation?.resume(throwing: timedOut ? BridgeError.timedOut : CancellationError())
        }
    }

    /// The frame is done with the bridge (the task has resumed); call it while the object or
    /// its memory is still held.
    @inlinable
    func end() {
        assert(
            withLock { $0.isSpent }, "Internal inconsistency: a single-shot bridge ended holding a token or a timeout")
    }
}
