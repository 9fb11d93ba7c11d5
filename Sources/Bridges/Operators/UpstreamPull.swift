/// An iterator that a Bridges operator can end from its pulling task's cancellation handler,
/// wherever that task is: a `CallbackStream`'s (an operator's upstream is often one).
@usableFromInline
protocol _EndsWhenItsTaskIsCancelled {
    /// Decides the stream's end as its consumer's cancellation handler does (no user code runs).
    var endOnCancel: @Sendable () -> Void { get }
}

extension CallbackStream.AsyncIterator: _EndsWhenItsTaskIsCancelled {
    @usableFromInline var endOnCancel: @Sendable () -> Void {
        let storage = consumer.storage
        return { storage.cancelConsumer() }
    }
}

extension AsyncSequence {
    /// Iterates this sequence in the current task (an operator's pulling task), calling `body`
    /// with each element until it answers false or the sequence ends. When the task is cancelled
    /// (the operator's consumer left), a `CallbackStream` upstream is ended at once, wherever the
    /// loop is: the loop's own `next()` would end it only when the task next asks, after the
    /// operator's consumer may have started the same source again (a `@MainActor` view model
    /// restarting `readings().debounce(…)` on the next line). Its teardown is then decided at the
    /// cancel, as for a consumer waiting in `next()`.
    @usableFromInline
    func _pullEndingOnCancel(_ body: (Element) -> Bool) async throws {
        var iterator = makeAsyncIterator()
        let end = (iterator as? any _EndsWhenItsTaskIsCancelled)?.endOnCancel
        try await withTaskCancellationHandler {
            while let element = try await iterator.next() {
                if !body(element) { return }
            }
        } onCancel: {
            end?()
        }
    }
}
