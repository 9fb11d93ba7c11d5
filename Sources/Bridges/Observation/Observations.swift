#if canImport(Observation)
import Observation

/// The values of an `@Observable` model as an `AsyncSequence`: the current value first, then one
/// value per change transaction, back to the Observation framework's floor (iOS 17, macOS 14) and
/// on Linux. The stdlib's `Observations` does this from iOS 26 / macOS 26.
///
/// Before (Combine):
/// <!-- snippet: legacy-body — the legacy code (Swift 5), in a view model with `model` and `cancellables` -->
/// ```swift
/// model.$query.sink { query in self.refresh(query) }.store(in: &cancellables)   // @Published var query
/// ```
/// After:
/// <!-- snippet: body — in a method of a `@MainActor` view model with `model` -->
/// ```swift
/// for await query in observations(of: model, { $0.query }) { refresh(query) }   // @Observable, var query
/// ```
///
/// - **Cold**: each iterator gets its own tracking, started on its first `next()`.
/// - **Where `read` runs**: in the isolation where `observations(of:)` was called (`#isolation`),
///   the model's own: call it from the `@MainActor` for a `@MainActor` model. Each read runs inside
///   `withObservationTracking`, so the properties it touches are the ones observed; a change to any
///   of them schedules one new read on that actor, which runs when the actor is next free, i.e.
///   after the synchronous code that made the change (the transaction). Several changes in one
///   transaction give one value. Called from nonisolated code, reads run one at a time on a
///   private actor of this stream; `read` must then capture nothing mutable, and since the
///   mutation then runs elsewhere, a read may run before the change that scheduled it is stored
///   (the value stays stale until the next change): prefer models isolated to an actor.
/// - **Buffering**: per `buffering`; `.latest` (the default) keeps the newest value not yet taken,
///   `.unbounded` keeps one value per transaction, however slow the consumer.
/// - **Lifetime**: the stream holds the model weakly (pass it as `model`, and use the closure's
///   parameter, not a captured reference); each read borrows it strongly for the read only. When
///   the model is deallocated the stream finishes. Teardown (leaving the loop, cancelling the
///   consumer's task, the model going away) runs exactly once; a change after it does nothing.
/// - A `read` that touches no observable property can never change: the stream then finishes
///   after the first value.
///
/// - Parameters:
///   - model: The observed object, held weakly. `Sendable`: a `@MainActor` class, or a class
///     isolated to another global actor (plain mutable classes cannot be read from another task).
///   - buffering: What happens to values the consumer has not taken yet.
///   - isolation: Where `read` runs; leave the default.
///   - fileID: Call site reported with any misuse; leave the default.
///   - line: Call site reported with any misuse; leave the default.
///   - read: Reads the value from the model; called once per value, in `isolation`.
@available(BridgesObservation, *)
public func observations<Model: AnyObject & Observable & Sendable, Value: Sendable>(
    of model: Model,
    buffering: BufferingPolicy = .latest,
    isolation: isolated (any Actor)? = #isolation,
    fileID: String = #fileID,
    line: UInt = #line,
    _ read: @escaping (_ model: Model) -> Value
) -> CallbackStream<Value, Never> {
    let reader = ObservationRead(read)
    let actor: any Actor = isolation ?? ObservationReadActor()
    let reference = WeakReference(model)
    return CallbackStream.synchronous(buffering: buffering, fileID: fileID, line: line) { sink in
        let tracker = ObservationTracker(model: reference, read: reader, actor: actor, sink: sink)
        tracker.scheduleRead()
        return Cancellation { tracker.stop() }
    }
}

/// Serialises the reads of a stream created in nonisolated code.
private actor ObservationReadActor {}

/// The caller's `read` closure, shared by the iterators of one stream.
///
/// `@unchecked Sendable`: `read` is not `Sendable`, but it is called only from
/// `ObservationTracker/readAndTrack(isolation:)`, isolated to the stream's actor: either the
/// isolation `observations(of:)` was called in (`#isolation`, where the closure was written and
/// which it inherits), or, for a nonisolated caller, the stream's private actor, which runs one
/// read at a time. So no two calls ever overlap, and each runs where the closure may run.
private final class ObservationRead<Model, Value>: @unchecked Sendable {
    let read: (Model) -> Value
    init(_ read: @escaping (Model) -> Value) { self.read = read }
}

/// One iteration's tracking: read with tracking on the actor, yield, and read again after the
/// next change, until stopped or the model is gone.
@available(BridgesObservation, *)
private final class ObservationTracker<Model: AnyObject & Sendable, Value: Sendable>: Sendable {
    private let model: WeakReference<Model>
    private let read: ObservationRead<Model, Value>
    private let actor: any Actor
    private let sink: CallbackStream<Value, Never>.Sink
    /// Whether the iteration is over (teardown ran, or the model is gone): no more reads or yields.
    private let stopped = LockedState(false)

    init(
        model: WeakReference<Model>, read: ObservationRead<Model, Value>, actor: any Actor,
        sink: CallbackStream<Value, Never>.Sink
    ) {
        self.model = model
        self.read = read
        self.actor = actor
        self.sink = sink
    }

    /// Starts one read on the actor (at start, and after each change).
    func scheduleRead() {
        let actor = actor
        Task { await self.readAndTrack(isolation: actor) }
    }

    /// Reads the value with tracking and yields it, on the actor: reads and yields of one
    /// iteration are serialised there, so values leave in the order they were read.
    private func readAndTrack(isolation: isolated any Actor) {
        guard !stopped.withLock({ $0 }) else { return }
        guard let model = model.object else { return modelGone() }
        let change = ChangeSignal(self)
        let value = withObservationTracking {
            read.read(model)
        } onChange: {
            change.fire()
        }
        guard !stopped.withLock({ $0 }) else { return }
        sink.yield(value)
    }

    /// The tracking's closure was released without firing: the model (and its registrar) is gone.
    func modelGone() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        if first { sink.finish() }
    }

    /// Teardown: later changes and reads do nothing.
    func stop() {
        stopped.withLock { $0 = true }
    }
}

/// Held by one tracking's `onChange` closure: the registrar releases it after the change fires,
/// or, without firing, when the model is deallocated, which ends the stream.
@available(BridgesObservation, *)
private final class ChangeSignal<Model: AnyObject & Sendable, Value: Sendable>: Sendable {
    private let tracker: WeakReference<ObservationTracker<Model, Value>>
    private let fired = LockedState(false)

    init(_ tracker: ObservationTracker<Model, Value>) { self.tracker = WeakReference(tracker) }

    func fire() {
        fired.withLock { $0 = true }
        tracker.object?.scheduleRead()
    }

    deinit {
        if !fired.withLock({ $0 }) { tracker.object?.modelGone() }
    }
}
#endif
