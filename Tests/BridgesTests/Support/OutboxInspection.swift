@testable import Bridges

extension Outbox {
    /// Events posted and not yet taken, read through reflection (the fields are private). Traps
    /// if the fields were renamed, so an exploration never silently stops seeing them.
    var pendingCount: Int {
        let mirror = Mirror(reflecting: self)
        guard let events = mirror.descendant("events") as? [Event], let head = mirror.descendant("head") as? Int else {
            preconditionFailure("Outbox no longer has `events` and `head`: update OutboxInspection")
        }
        return events.count - head
    }

    /// Whether the outbox believes someone is delivering.
    var believesSomeoneDelivers: Bool {
        guard let isDelivering = Mirror(reflecting: self).descendant("isDelivering") as? Bool else {
            preconditionFailure("Outbox no longer has `isDelivering`: update OutboxInspection")
        }
        return isDelivering
    }
}
