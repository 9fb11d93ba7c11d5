// `shared(replay:stopTimeout:)`: one upstream, many consumers (Combine's `share()`/`multicast`,
// Kotlin's `shareIn`). The fan-out is a `Broadcast` per iteration of the upstream, the iterating
// task an `OwnedTask`; `SharedSequence` only counts who is connected.

extension AsyncSequence where Self: Sendable, Element: Sendable {
    /// Shares one iteration of this sequence among every consumer iterating the result, each
    /// with its own buffering policy. It fails with `any Error`; where the OS's Swift runtime
    /// knows `AsyncSequence.Failure` (macOS 15, iOS 18 and later, and Linux) the overload typed by
    /// this sequence's `Failure` is chosen instead (`Never` for a sequence that cannot fail).
    ///
    /// Before (a hand-written pump, started before anyone listens and never stopped):
    /// <!-- snippet: body — in a method of a `@MainActor` view model with `socket` -->
    /// ```swift
    /// let events = Broadcast<Event>()
    /// let pump = Task { for await event in socket.events { events.yield(event) }; events.finish() }
    /// ```
    /// After (started by the first consumer, stopped when the last one leaves):
    /// <!-- snippet: body — in a method of a `@MainActor` view model with `socket` -->
    /// ```swift
    /// let events = socket.events.shared()
    /// ```
    ///
    /// See ``SharedSequence`` for when the upstream starts, stops and restarts, and how this
    /// differs from swift-async-algorithms' `share(bufferingPolicy:)` and Kotlin's `shareIn`.
    ///
    /// - Parameters:
    ///   - replay: How many of the current iteration's most recent elements a new consumer
    ///     receives first.
    ///   - stopTimeout: How long the upstream keeps running after the last consumer left (nil:
    ///     it is cancelled at once). A consumer arriving within it joins the running iteration.
    ///     Only while something keeps the shared sequence: keep it where the next consumer will
    ///     come from (an app-wide store, not the view model that leaves), or it stops at once.
    ///     Any `Clock`: `.after(.seconds(5), on: clock)`.
    ///   - fileID: Call site reported with any misuse; leave the default.
    ///   - line: Call site reported with any misuse; leave the default.
    /// - Precondition: `replay >= 0`; otherwise the program stops with a message naming the
    ///   argument and the call's file and line, in every build configuration.
    @_disfavoredOverload
    public func shared(
        replay: Int = 0,
        stopTimeout: BridgeTimeout? = nil,
        fileID: String = #fileID,
        line: UInt = #line
    ) -> SharedSequence<Element, any Error> {
        SharedSequence(replay: replay, stopTimeout: stopTimeout, site: CallSite(fileID: fileID, line: line)) {
            broadcast in
            var iterator = makeAsyncIterator()
            return await _iterate(into: broadcast) {
                do { return .success(try await iterator.next()) } catch { return .failure(error) }
            }
        }
    }

    /// Shares one iteration of this sequence among every consumer iterating the result, each
    /// with its own buffering policy; it fails as this sequence does (never, if it cannot).
    ///
    /// <!-- snippet: body — in a method of a `@MainActor` view model with `locationUpdates`, a stream of the legacy manager's updates -->
    /// ```swift
    /// let locations = locationUpdates.shared(replay: 1, stopTimeout: .after(.seconds(5)))
    /// for try await location in locations.stream(buffering: .latest) { show(location) }
    /// ```
    ///
    /// See ``SharedSequence`` for when the upstream starts, stops and restarts.
    ///
    /// - Parameters:
    ///   - replay: How many of the current iteration's most recent elements a new consumer
    ///     receives first.
    ///   - stopTimeout: How long the upstream keeps running after the last consumer left (nil:
    ///     it is cancelled at once). A consumer arriving within it joins the running iteration.
    ///     Only while something keeps the shared sequence: keep it where the next consumer will
    ///     come from (an app-wide store, not the view model that leaves), or it stops at once.
    ///   - fileID: Call site reported with any misuse; leave the default.
    ///   - line: Call site reported with any misuse; leave the default.
    /// - Precondition: `replay >= 0`; otherwise the program stops with a message naming the
    ///   argument and the call's file and line, in every build configuration.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)  // AsyncSequence.Failure
    public func shared(
        replay: Int = 0,
        stopTimeout: BridgeTimeout? = nil,
        fileID: String = #fileID,
        line: UInt = #line
    ) -> SharedSequence<Element, Failure> {
        SharedSequence(replay: replay, stopTimeout: stopTimeout, site: CallSite(fileID: fileID, line: line)) {
            broadcast in
            var iterator = makeAsyncIterator()
            return await _iterate(into: broadcast) { () async -> Result<Element?, Failure> in
                do throws(Failure) { return .success(try await iterator.next(isolation: nil)) } catch {
                    return .failure(error)
                }
            }
        }
    }
}

/// One iteration of a shared upstream: pulls an element only when every waiting consumer has
/// room for it, and sends it; stops when cancelled (the last consumer left). Returns the
/// upstream's failure, or nil at its end or when cancelled.
///
/// The room is asked for only when the last send said a waiting consumer is now full
/// (`.stopProducing`), and before the first pull: a send answered `.enqueued` left room in every
/// one of them, so the next pull needs no lock (with no waiting consumer, none ever).
func _iterate<Element: Sendable, Failure: Error>(
    into broadcast: ThrowingBroadcast<Element, Failure>,
    pull: () async -> Result<Element?, Failure>
) async -> Failure? {
    var full = true
    while true {
        if full { await broadcast.waitToPull() }
        if Task.isCancelled { return nil }
        switch await pull() {
        case .success(let element?):
            if case .stopProducing = broadcast.yield(element) { full = true } else { full = false }
        case .success(nil): return nil
        case .failure(let failure): return failure
        }
    }
}
