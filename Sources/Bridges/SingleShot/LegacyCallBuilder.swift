/// Lets one `withCallback` accept both kinds of body: one that just starts the legacy call, and
/// one whose last `Cancellation` expression makes the call cancellable.
///
/// ```swift
/// try await withCallback { done in api.load(completion: done) }                 // not cancellable
/// try await withCallback { done in api.start(completion: done) }                // start(...) returns a Cancellation
/// try await withCallback { done in                                            // explicit return: as usual
///     let task = session.dataTask(with: url) { data, _, error in done(data, error) }
///     task.resume()
///     return Cancellation { task.cancel() }
/// }
/// ```
///
/// Why a builder: with two plain overloads (body returning `Void` / returning `Cancellation`)
/// the type checker cannot choose for a multi-statement body, and disfavouring either one
/// silently drops a returned token or rejects bodies without `return`. Bodies the builder can't
/// take (`guard`, `if`, loops) fall back to a plain `Void` overload; return the token
/// explicitly there if the call is cancellable.
@resultBuilder
public enum LegacyCallBuilder {
    /// What one statement of the body contributed: a token, or nothing.
    public struct Component {
        @usableFromInline let cancellation: Cancellation?
        @inlinable init(_ cancellation: Cancellation?) { self.cancellation = cancellation }
    }

    @inlinable public static func buildExpression(_ cancellation: Cancellation) -> Component { Component(cancellation) }
    /// Any other expression (the legacy call's own return value, `done(…)`) contributes nothing.
    @inlinable public static func buildExpression<Value>(_ value: Value) -> Component { Component(nil) }
    @inlinable public static func buildBlock() -> Component { Component(nil) }
    @inlinable public static func buildPartialBlock(first: Component) -> Component { first }
    @inlinable public static func buildPartialBlock(accumulated: Component, next: Component) -> Component {
        Component(next.cancellation ?? accumulated.cancellation)
    }
    @inlinable public static func buildFinalResult(_ component: Component) -> Cancellation? { component.cancellation }
}
