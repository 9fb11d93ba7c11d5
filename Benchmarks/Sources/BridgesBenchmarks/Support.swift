// Small pieces shared by the stream cases: a tally that checks what a consumer saw, boxes to
// hand a producer handle across a thread, and the policy mapping to AsyncStream's.

import Bridges
import Foundation

/// What a consumer saw: count, sum and how many elements arrived out of order.
struct Tally: Sendable {
    var count = 0
    var sum = 0
    var outOfOrder = 0
    var last = Int.min

    /// For a single producer of `0..<n`: every element must be larger than the previous one
    /// (lossy policies may skip some, never reorder).
    @inline(__always)
    mutating func add(_ x: Int) {
        if x <= last { outOfOrder &+= 1 }
        last = x
        count &+= 1
        sum &+= x
    }

    /// For several producers, where only count and sum can be checked.
    @inline(__always)
    mutating func addUnordered(_ x: Int) {
        count &+= 1
        sum &+= x
    }

    func sample(ns: Double, sent: Int) -> Sample { Sample(nanoseconds: ns, sent: sent, delivered: count) }

    /// Lossless: exactly `0..<sent` in order. Lossy: in order, nothing invented, and — for a
    /// policy that keeps the newest (`.latest`, `.dropOldest`) — the last element sent arrived,
    /// because finishing delivers what is buffered. `.drop` may legitimately deliver nothing
    /// when the producer outruns a consumer that is never waiting.
    func check(_ what: String, sent: Int, lossless: Bool, keepsNewest: Bool = false) throws {
        if lossless {
            try expectLossless(what, sent: sent, delivered: count, sum: sum, outOfOrder: outOfOrder)
        } else if outOfOrder != 0 || count > sent {
            throw BenchFailure(
                "\(what): a lossy policy reordered or invented elements: sent \(sent), delivered \(count), out of order \(outOfOrder)"
            )
        } else if keepsNewest && sent > 0 && last != sent - 1 {
            throw BenchFailure(
                "\(what): a keep-newest policy lost the last element: sent 0..<\(sent), last delivered \(last)")
        }
    }
}

/// Hands a value created inside a builder to code outside it.
final class Box<T>: @unchecked Sendable {
    // @unchecked Sendable: written once before the reader is released (builder runs before
    // the first element arrives), then only read; the benchmarks never race on it.
    var value: T?
    init(_ value: T? = nil) { self.value = value }
}

/// The policies of case 1, by name, for both sides.
enum SPSCPolicy: String, CaseIterable, Sendable {
    case unbounded, latest, drop
    case dropOldest16 = "dropOldest(16)"

    var lossless: Bool { self == .unbounded }
    var keepsNewest: Bool { self == .latest || self == .dropOldest16 }

    var asyncStream: AsyncStream<Int>.Continuation.BufferingPolicy {
        switch self {
        case .unbounded: .unbounded
        case .latest: .bufferingNewest(1)
        case .drop: .bufferingOldest(0)  // keeps nothing: drops the new element unless a consumer waits
        case .dropOldest16: .bufferingNewest(16)
        }
    }
}

enum ProducerKind: String, Sendable { case thread, task }

/// Starts `body` on a new Foundation thread.
func onThread(_ body: @escaping @Sendable () -> Void) {
    let thread = Thread(block: body)
    thread.stackSize = 1 << 20
    thread.start()
}
