import Foundation

/// A one-shot signal: `open()` from anywhere, `await wait()` until it is open.
public final class ExampleSignal: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    public init() { (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1)) }
    public func open() { continuation.yield(); continuation.finish() }
    public func wait() async { for await _ in stream { return } }
}

/// A value behind a lock, settable from `@Sendable` closures.
public final class ExampleBox<Value>: @unchecked Sendable {  // every access takes `lock`
    private let lock = NSLock()
    private var _value: Value
    public init(_ value: Value) { _value = value }
    public var value: Value {
        get { lock.withLock { _value } }
        set { lock.withLock { _value = newValue } }
    }
}
