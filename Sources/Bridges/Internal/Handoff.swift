/// A value carried where the compiler cannot prove it `Sendable`: the package's one unchecked
/// box. Each use says, where the box is made, what makes that crossing safe. The uses are of
/// two kinds:
///
/// - moved, never shared: one thread makes the value and hands it over once (resuming a
///   continuation, calling back), and from then on only the receiver touches it — a stream's
///   sender result, a completion handler's result, a weak-owner task's handler;
/// - shared, but thread-safe by its own documentation (a Foundation object not marked
///   `Sendable`, such as `NotificationCenter` or a `FileHandle`).
@usableFromInline
struct Handoff<Value>: @unchecked Sendable {
    @usableFromInline let value: Value

    @inlinable
    init(_ value: Value) { self.value = value }
}
