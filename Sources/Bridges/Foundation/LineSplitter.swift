#if canImport(Foundation)
import Foundation

/// Splits bytes into lines across chunk boundaries. Fed only from the reader thread; the lock
/// makes that assumption unnecessary.
final class LineSplitter: Sendable {
    private let pending = LockedState<[UInt8]>([])

    /// Returns the complete lines in `data`; empty `data` (end of file) flushes the last line.
    func feed(_ data: Data) -> [String] {
        pending.withLock { pending in
            var lines: [String] = []
            if data.isEmpty {
                if !pending.isEmpty { lines.append(String(decoding: pending, as: UTF8.self)) }
                pending = []
                return lines
            }
            for byte in data {
                if byte == UInt8(ascii: "\n") {
                    lines.append(String(decoding: pending, as: UTF8.self))
                    pending.removeAll(keepingCapacity: true)
                } else {
                    pending.append(byte)
                }
            }
            return lines
        }
    }
}
#endif
