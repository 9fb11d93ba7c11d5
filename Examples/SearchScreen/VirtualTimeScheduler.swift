#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine
/// A Combine scheduler whose time moves only in ``advance(by:)``: the Combine side of the test
/// (OpenCombine ships no test scheduler; combine-schedulers' `TestScheduler` is the full one).
/// Actions due at the same time run in the order they were scheduled; `advance` runs them one at
/// a time, with `now` at each one's due time. Use it from one thread.
public final class VirtualTimeScheduler: Scheduler {
    public struct Time: Strideable, Hashable {
        public var nanoseconds: Int
        public func distance(to other: Time) -> Stride { Stride(nanoseconds: other.nanoseconds - nanoseconds) }
        public func advanced(by n: Stride) -> Time { Time(nanoseconds: nanoseconds + n.nanoseconds) }
    }

    public struct Stride: SchedulerTimeIntervalConvertible, Comparable, SignedNumeric, Hashable, ExpressibleByIntegerLiteral {
        public var nanoseconds: Int
        public init(nanoseconds: Int) { self.nanoseconds = nanoseconds }
        public init(integerLiteral value: Int) { nanoseconds = value }
        public init?<T: BinaryInteger>(exactly source: T) {
            guard let value = Int(exactly: source) else { return nil }
            nanoseconds = value
        }
        public var magnitude: Int { nanoseconds.magnitude > Int.max ? .max : abs(nanoseconds) }
        public static func seconds(_ s: Int) -> Stride { Stride(nanoseconds: s * 1_000_000_000) }
        public static func seconds(_ s: Double) -> Stride { Stride(nanoseconds: Int(s * 1_000_000_000)) }
        public static func milliseconds(_ ms: Int) -> Stride { Stride(nanoseconds: ms * 1_000_000) }
        public static func microseconds(_ us: Int) -> Stride { Stride(nanoseconds: us * 1_000) }
        public static func nanoseconds(_ ns: Int) -> Stride { Stride(nanoseconds: ns) }
        public static func < (l: Stride, r: Stride) -> Bool { l.nanoseconds < r.nanoseconds }
        public static func + (l: Stride, r: Stride) -> Stride { Stride(nanoseconds: l.nanoseconds + r.nanoseconds) }
        public static func - (l: Stride, r: Stride) -> Stride { Stride(nanoseconds: l.nanoseconds - r.nanoseconds) }
        public static func * (l: Stride, r: Stride) -> Stride { Stride(nanoseconds: l.nanoseconds * r.nanoseconds) }
        public static func += (l: inout Stride, r: Stride) { l = l + r }
        public static func -= (l: inout Stride, r: Stride) { l = l - r }
        public static func *= (l: inout Stride, r: Stride) { l = l * r }
    }

    public typealias SchedulerTimeType = Time
    public typealias SchedulerOptions = Never

    private struct Scheduled {
        var due: Time
        var order: Int
        var interval: Stride?
        var action: () -> Void
    }

    public private(set) var now = Time(nanoseconds: 0)
    public var minimumTolerance: Stride { .zero }
    private var queue: [Scheduled] = []
    private var nextOrder = 0

    public init() {}

    public func schedule(options: Never?, _ action: @escaping () -> Void) {
        enqueue(at: now, interval: nil, action)
    }

    public func schedule(after date: Time, tolerance: Stride, options: Never?, _ action: @escaping () -> Void) {
        enqueue(at: date, interval: nil, action)
    }

    public func schedule(after date: Time, interval: Stride, tolerance: Stride, options: Never?, _ action: @escaping () -> Void) -> any Cancellable {
        let order = enqueue(at: date, interval: interval, action)
        return AnyCancellable { [weak self] in self?.queue.removeAll { $0.order == order } }
    }

    /// Runs every action due within `duration`, in due-time order, then sets `now` to the end.
    public func advance(by duration: Stride = .zero) {
        let end = now.advanced(by: duration)
        while let index = queue.indices.min(by: { (queue[$0].due, queue[$0].order) < (queue[$1].due, queue[$1].order) }),
              queue[index].due <= end {
            let item = queue.remove(at: index)
            now = max(now, item.due)
            if let interval = item.interval { queue.append(Scheduled(due: item.due.advanced(by: interval), order: item.order, interval: interval, action: item.action)) }
            item.action()
        }
        now = end
    }

    @discardableResult
    private func enqueue(at due: Time, interval: Stride?, _ action: @escaping () -> Void) -> Int {
        nextOrder += 1
        queue.append(Scheduled(due: due, order: nextOrder, interval: interval, action: action))
        return nextOrder
    }
}
#endif
