// The stream engine's door for fan-outs: how Broadcast and the operators (`mapLatest`,
// `debounce`) hand what they decided to the downstream streams, through the storage's own
// `decideYield`/`decideFinish` (there is no other way into a stream's state): no queue and no
// deliverer. A caller that holds its own lock (the broadcast's, an operator's) decides each yield
// or finish into the downstream stream's state machine right there, taking that stream's lock
// for the decision only, and collects what the stream says must follow: resume its consumer,
// report a drop, run its teardown. It releases its own lock and then performs those actions.
//
// So the order every downstream stream sees is the order of the caller's critical sections (one
// order for every subscriber of a broadcast, never a stale `mapLatest` result after a newer one),
// and each call does the work of its own decision only: a sender fans out its own element, a new
// subscriber receives its own replay, whatever other threads keep sending.
//
// Lock order: the caller's lock, then a stream's. A stream never takes a caller's lock while
// holding its own (it calls handlers, teardowns and `onDrop` after releasing it), and a sink is
// never released under the caller's lock (its last release finishes the stream, whose teardown
// may call back into the caller).

/// The actions that yields and finishes decided into downstream streams must perform once every
/// lock is released, in decision order. Filled under the caller's lock with ``decideYield(_:to:)``
/// and ``decideFinish(_:to:)``, then ``perform()``ed after it. A yield that only buffered its
/// element needs nothing afterwards and adds nothing.
@usableFromInline
struct Outbox<Element, Failure: Error> {
    @usableFromInline typealias Storage = CallbackStreamStorage<Element, Failure>

    @usableFromInline
    enum Entry {
        case yield(Storage, Storage.Machine.YieldAction)
        case finish(Storage, Storage.Machine.FinishAction)
    }

    /// Most calls need one action (resume the consumer that was waiting): kept in the ring's
    /// inline slot, without an allocation.
    @usableFromInline var entries = StreamRing<Entry>()

    @inlinable init() {}

    /// Decides the yield of `element` into `sink`'s stream, under its lock only.
    @inlinable
    mutating func decideYield(_ element: Element, to sink: CallbackStream<Element, Failure>.Sink) {
        let storage = sink.token.storage
        let action = storage.decideYield(element)
        if case .answer = action { return }
        entries.append(.yield(storage, action), initialCapacity: 2, maximumCapacity: .max)
    }

    /// Decides the end of `sink`'s stream (`nil`: finished normally), under its lock only.
    ///
    /// A stream whose consumer already ended it (it left while the end was being decided) needs
    /// nothing: that is no misuse, since this library, not the user, finishes the stream here,
    /// so the report a sink's own `finish(throwing:)` would make is not made.
    @inlinable
    mutating func decideFinish(_ failure: Failure?, to sink: CallbackStream<Element, Failure>.Sink) {
        let storage = sink.token.storage
        let action = storage.decideFinish(failure)
        guard case .finish = action else { return }
        entries.append(.finish(storage, action), initialCapacity: 2, maximumCapacity: .max)
    }

    /// Performs the collected actions, in order, and empties the outbox. Call with no lock held.
    @inlinable
    mutating func perform() {
        while let entry = entries.popFirst() {
            switch entry {
            case .yield(let storage, let action):
                storage.actOnFanOut(action)
            case .finish(let storage, let action):
                storage.act(action, fileID: #fileID, line: #line)
            }
        }
    }
}
