#if canImport(Foundation)
import Foundation

/// A base class for the object that adopts a delegate protocol on behalf of a ``CallbackStream``.
///
/// Subclass it, adopt the delegate protocol, and forward each callback to ``sink``. Create it in
/// the stream's builder and return ``retained(isolation:until:)`` as the teardown: the stream then owns the
/// proxy until the teardown has run (delegates are usually held `weak` by their owner, the
/// classic vanishing-delegate bug), and releases it right after.
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

    public init(_ sink: CallbackStream<Element, Failure>.Sink) {
        self.sink = sink
        super.init()
    }

    /// The teardown to return from the builder: keeps this proxy alive until it runs, then runs
    /// `detach` (unset the delegate, stop the source) and releases the proxy.
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
