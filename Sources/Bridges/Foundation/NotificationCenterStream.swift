#if canImport(Foundation)
import Foundation

extension NotificationCenter {
    /// The notifications named `name` (from `object`, if given) as a stream.
    ///
    /// The observer is added when iteration starts and removed at teardown (when the loop ends,
    /// breaks, or its task is cancelled), so no observer outlives its consumer.
    ///
    /// Before:
    /// <!-- snippet: legacy-body — the legacy code (Swift 5), in a view model with `center` and `token` -->
    /// ```swift
    /// token = center.addObserver(forName: .didSave, object: nil, queue: nil) { note in self.refresh(note) }
    /// // …and later, somewhere, never forgotten: center.removeObserver(token)
    /// ```
    /// After:
    /// <!-- snippet: body — in a method of a `@MainActor` view model with `center` -->
    /// ```swift
    /// for await id in center.notificationStream(named: .didSave, transform: { $0.object as? ID }) { refresh(id) }
    /// ```
    ///
    /// - Parameters:
    ///   - buffering: What happens to notifications the consumer has not taken yet.
    ///   - transform: Turns each notification into the element (posted on the posting thread);
    ///     return nil to skip one. The element must be `Sendable`: it crosses to the consumer.
    ///   - object: Only notifications posted by this object (`nil`: any sender).
    ///   - line: Call site reported with any misuse; leave the default.
    ///   - name: The notification name to observe (`nil`: every notification).
    ///   - fileID: Call site reported with any misuse; leave the default.
    public func notificationStream<Element: Sendable>(
        named name: Notification.Name?,
        object: (any AnyObject & Sendable)? = nil,
        buffering: BufferingPolicy = .unbounded,
        fileID: String = #fileID,
        line: UInt = #line,
        transform: @escaping @Sendable (Notification) -> Element?
    ) -> CallbackStream<Element, Never> {
        let center = Handoff(self)  // shared: NotificationCenter and its observer tokens are thread-safe
        return CallbackStream.synchronous(buffering: buffering, fileID: fileID, line: line) { sink in
            let observer = center.value.addObserver(forName: name, object: object, queue: nil) { note in
                guard let element = transform(note) else { return }
                sink.yield(element)
            }
            let token = Handoff(observer)
            return Cancellation { center.value.removeObserver(token.value) }
        }
    }

    /// The notifications named `name` (from `object`, if given) as a stream of `Notification`s,
    /// handed to the consumer **unchecked**: `Notification` is not `Sendable` (its `userInfo`
    /// and `object` may hold anything). Safe when nothing touches a posted notification after
    /// posting it; otherwise map it to a `Sendable` value with
    /// ``notificationStream(named:object:buffering:fileID:line:transform:)``.
    public func uncheckedNotificationStream(
        named name: Notification.Name?,
        object: (any AnyObject & Sendable)? = nil,
        buffering: BufferingPolicy = .unbounded,
        fileID: String = #fileID,
        line: UInt = #line
    ) -> CallbackStream<Notification, Never> {
        let center = Handoff(self)
        return CallbackStream.synchronous(buffering: buffering, fileID: fileID, line: line) { sink in
            let observer = center.value.addObserver(forName: name, object: object, queue: nil) { note in
                // Unchecked, as the name says: the poster does not touch a posted notification.
                nonisolated(unsafe) let handedOver = note
                sink.yield(handedOver)
            }
            let token = Handoff(observer)
            return Cancellation { center.value.removeObserver(token.value) }
        }
    }
}

#endif
