@testable import Bridges

extension Outbox {
    /// Events posted and not yet taken, read through reflection (the fields are private).
    var pendingCount: Int {
        let mirror = Mirror(reflecting: self)
        let events = mirror.descendant("events") as? [Event] ?? []
        let head = mirror.descendant("head") as? Int ?? 0
        return events.count - head
    }

    /// Whether the outbox believes someone is delivering.
    var believesSomeoneDelivers: Bool {
        Mirror(reflecting: self).descendant("isDelivering") as? Bool ?? false
    }
}
