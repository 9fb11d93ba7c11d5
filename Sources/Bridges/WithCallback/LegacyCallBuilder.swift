/// Lets one `withCallback` accept both kinds of body: one that just starts the legacy call, and
/// one whose last `Cancellation` expression makes the call cancellable.
///
/// <!-- snippet: body — in a method of a `@MainActor` view model with `api`, `session` and `url` -->
/// ```swift
/// let items = try await withCallback { done in api.load(completion: done) }        // not cancellable
/// let started = try await withCallback { done in api.start(completion: done) }     // start(...) returns a Cancellation
/// let data = try await withCallback { done in                                      // explicit return: as usual
///     let task = session.dataTask(with: url) { data, _, error in done(data, error) }
///     task.resume()
///     return Cancellation { task.cancel() }
/// }
/// ```
///
/// Why a builder: with two plain overloads (body returning `Void` / returning `Cancellation`)
/// the type checker cannot choose for a multi-statement body, and disfavouring either one
/// silently drops a returned token or rejects bodies without `return`.
///
/// `if`/`else`, `switch`, `if #available` and `for` are part of the builder, so a body that
/// checks something before the legacy call keeps the token it ends with:
/// <!-- snippet: body — in a method of a `@MainActor` view model with `cache` and `client` -->
/// ```swift
/// let user = try await withCallback { done in
///     if cache.isStale { cache.reset() }
///     let request = client.fetchUser(id, completion: done)
///     Cancellation { request.cancel() }                 // kept: the call is cancellable
/// }
/// ```
/// Bodies the builder can't take (`guard`, `do`/`catch`, `while`) do not compile: they would
/// drop a token they end with, so they meet an unavailable overload whose error says what to
/// write: `return` the token explicitly (`return Cancellation { … }`), or `return nil` when the
/// call cannot be cancelled. A body with an explicit `return` is an ordinary closure, and its
/// token is never dropped. `.ci/check-builder-diagnostics.sh` checks both directions.
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
    /// `if` without `else`: the branch's token, if it ran.
    @inlinable public static func buildOptional(_ component: Component?) -> Component { component ?? Component(nil) }
    /// `if`/`else` and `switch`: the token of the branch that ran.
    @inlinable public static func buildEither(first component: Component) -> Component { component }
    @inlinable public static func buildEither(second component: Component) -> Component { component }
    /// `if #available`.
    @inlinable public static func buildLimitedAvailability(_ component: Component) -> Component { component }
    /// `for`: the last token any iteration produced (one legacy call per body is the norm).
    @inlinable public static func buildArray(_ components: [Component]) -> Component {
        Component(components.last { $0.cancellation != nil }?.cancellation)
    }
}
