#if canImport(Foundation)
import Foundation

extension NotificationCenter {
    /// The notifications named `name` (from `object`, if given) as a stream.
    ///
    /// The observer is added when iteration starts and removed at teardown (when the loop ends,
    /// breaks, or its task is cancelled), so no observer outlives its consumer.
    ///
    /// Before:
    /// ```swift
    /// token = center.addObserver(forName: .didSave, object: nil, queue: nil) { note in self.refresh(note) }
    /// // …and later, somewhere, never forgotten: center.removeObserver(token)
    /// ```
    /// After:
    /// ```swift
    /// for await note in center.notificationStream(named: .didSave) { refresh(note) }
    /// ```
    ///
    /// - Parameters:
    ///   - buffering: What happens to notifications the consumer has not taken yet.
    ///   - transform: Turns each notification into the element (posted on the posting thread);
    ///     return nil to skip one.
    ///   - object: Only notifications posted by this object (`nil`: any sender).
    ///   - line: Call site reported with any misuse; leave the default.
    ///   - name: The notification name to observe (`nil`: every notification).
    ///   - fileID: Call site reported with any misuse; leave the default.
    public func notificationStream<Element>(
        named name: Notification.Name?,
        object: (any AnyObject & Sendable)? = nil,
        buffering: BufferingPolicy = .unbounded,
        fileID: String = #fileID,
        line: UInt = #line,
        transform: @escaping @Sendable (Notification) -> Element?
    ) -> CallbackStream<Element, Never> {
        let center = UncheckedBox(self)
        return CallbackStream(buffering: buffering, fileID: fileID, line: line) { sink in
            let observer = center.value.addObserver(forName: name, object: object, queue: nil) { note in
                guard let element = transform(note) else { return }
                // `yield` takes its element `sending`. A posted Notification (and what `transform`
                // derives from it) is not touched by the poster afterwards, so handing it to the
                // consumer is safe although Notification is not marked Sendable on Linux.
                nonisolated(unsafe) let handedOver = element
                sink.yield(handedOver)
            }
            let token = UncheckedBox(observer)
            return Cancellation { center.value.removeObserver(token.value) }
        }
    }

    /// The notifications named `name` (from `object`, if given) as a stream of `Notification`s.
    /// See ``notificationStream(named:object:buffering:fileID:line:transform:)``.
    public func notificationStream(
        named name: Notification.Name?,
        object: (any AnyObject & Sendable)? = nil,
        buffering: BufferingPolicy = .unbounded,
        fileID: String = #fileID,
        line: UInt = #line
    ) -> CallbackStream<Notification, Never> {
        notificationStream(named: name, object: object, buffering: buffering, fileID: fileID, line: line) { $0 }
    }
}

/// Carries a Foundation object that is not marked Sendable into a `@Sendable` closure.
struct UncheckedBox<Value>: @unchecked Sendable {  // NotificationCenter and its observer tokens are thread-safe
    let value: Value
    init(_ value: Value) { self.value = value }
}
#endif
