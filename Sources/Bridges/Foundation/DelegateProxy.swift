#if canImport(Foundation)
import Foundation

/// A base class for the object that adopts a delegate protocol on behalf of a ``CallbackStream``.
///
/// Subclass it, adopt the delegate protocol, and forward each callback to ``sink``. Create it in
/// the stream's builder: the stream keeps every proxy made from its sink until its teardown has
/// run, whatever the teardown captures (delegates are usually held `weak` by their owner, the
/// classic vanishing-delegate bug), and releases it right after. ``retained(isolation:until:)``
/// makes the teardown (a ``Cancellation``) from what stops the source. That teardown runs in the
/// builder's isolation: when a loop over the stream exits on that actor (a `@MainActor` view
/// model's), it has run before the loop's next statement, so the manager can be started again
/// at once. A stream that keeps its proxy never reports its producer lost: it ends when the proxy
/// finishes the sink or its consumer leaves (a manager deallocated without telling its delegate
/// leaves the loop waiting, as with any delegate the stream keeps).
///
/// ```swift
/// final class ParserEvents: DelegateProxy<String, any Error>, XMLParserDelegate, @unchecked Sendable {
///     func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?,
///                 qualifiedName: String?, attributes: [String: String]) {
///         if case .terminated = sink.yield(name) { parser.abortParsing() }
///     }
///     func parserDidEndDocument(_ parser: XMLParser) { sink.finish() }
///     func parser(_ parser: XMLParser, parseErrorOccurred error: Error) { sink.finish(throwing: error) }
/// }
///
/// func elementNames(in data: Data) -> CallbackStream<String, any Error> {
///     CallbackStream { sink in
///         let parser = XMLParser(data: data)
///         let proxy = ParserEvents(sink)
///         parser.delegate = proxy               // weak: the stream keeps the proxy alive
///         _ = parser.parse()                    // or start an asynchronous source here
///         return proxy.retained { /* stop the source, unset the delegate */ }
///     }
/// }
/// ```
///
/// - Note: Subclasses restate `@unchecked Sendable` (the compiler requires it). The class is
///   `@unchecked Sendable` so that the teardown can hold it: its only state is
///   the (Sendable) sink. A subclass that adds mutable state must protect it, since the delegate
///   source and the teardown may touch the proxy from different threads.
open class DelegateProxy<Element, Failure: Error>: NSObject, @unchecked Sendable {
    /// Where the delegate callbacks go. Yield, then finish (or finish throwing) exactly once.
    public let sink: CallbackStream<Element, Failure>.Sink

    /// A proxy forwarding to `sink`. The sink's stream keeps it alive until the stream's teardown
    /// has run, whatever the teardown captures, then releases it.
    public init(_ sink: CallbackStream<Element, Failure>.Sink) {
        self.sink = sink
        super.init()
        sink.keepUntilTeardown(self)
    }

    /// The teardown to return from the builder: runs `detach` (unset the delegate, stop the
    /// source); the proxy is released once it has run.
    ///
    /// Like ``Cancellation/init(isolation:_:)``, `detach` runs in the isolation it was written in:
    /// in a builder written in a `@MainActor` view model it may use the view model's legacy manager
    /// (not `Sendable`), and runs on the main actor.
    ///
    /// - Parameters:
    ///   - isolation: The actor `detach` belongs to (filled in by `#isolation`); leave the default.
    ///   - detach: Stops the source and unsets the delegate.
    public final func retained(
        isolation: isolated (any Actor)? = #isolation,
        until detach: @escaping () -> Void = {}
    ) -> Cancellation {
        Cancellation(isolation: isolation) {
            detach()
            withExtendedLifetime(self) {}
        }
    }
}
#endif
