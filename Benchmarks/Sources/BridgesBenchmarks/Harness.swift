// The measuring harness: run a Bridges variant and its peer alternately, take the median of
// the repetitions, print a table row and one machine-readable RATIO line per comparison.

import CMallocInfo
import Foundation

/// One timed run: how long it took to push `sent` elements through, and how many arrived.
struct Sample: Sendable {
    var nanoseconds: Double
    var sent: Int
    var delivered: Int

    var nsPerElement: Double { nanoseconds / Double(max(sent, 1)) }
}

/// A broken promise of the code under test (an element lost under a lossless policy, a wrong
/// order or sum). The run exits non-zero naming the case; timing never fails a run.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Times `body` with the continuous clock.
@inline(__always)
func timed<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async rethrows -> (T, Double)
{
    let clock = ContinuousClock()
    let start = clock.now
    let value = try await body()
    let elapsed = start.duration(to: clock.now)
    let ns = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
    return (value, ns)
}

/// Checks that a lossless run delivered exactly `0..<count` in order (by count and sum; order is
/// checked by the consumer as it goes).
func expectLossless(_ what: String, sent: Int, delivered: Int, sum: Int, outOfOrder: Int = 0) throws {
    let expectedSum = sent * (sent - 1) / 2
    guard delivered == sent, sum == expectedSum, outOfOrder == 0 else {
        throw BenchFailure(
            "\(what): lost or reordered elements under a lossless policy: sent \(sent), delivered \(delivered), sum \(sum) (expected \(expectedSum)), out of order \(outOfOrder)"
        )
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/// Everything measured in one process run, printed at the end.
@MainActor
final class Report {
    static let shared = Report()

    struct Row {
        var name: String
        var bridges: Double
        var peer: Double
        var peerName: String
        var bridgesDelivery: Double?  // delivered/sent, for lossy policies
        var peerDelivery: Double?
        var spread: (Double, Double)  // (max-min)/median for bridges and peer, to judge noise
        /// The minimal correct design (a lock, a ring, one stored continuation) in the same run.
        var limit: Double? = nil
        /// Why no speedup is claimed (not like for like, or deliveries differ); nil: a RATIO line.
        var noClaim: String? = nil

        /// Lossy rows are per *delivered* element (a peer that drops more does less work).
        var perDelivered: Bool { bridgesDelivery != nil }
    }
    struct MemoryRow {
        var name: String
        var bridges: Double
        var peer: Double
        var peerName: String
        var note: String
    }

    var rows: [Row] = []
    var memory: [MemoryRow] = []
    var failures: [String] = []
    var notes: [String] = []
}

struct Config: Sendable {
    enum Side: String, Sendable { case both, bridges, peer, limit }

    var quick: Bool
    var repetitions: Int
    var filters: [String]
    /// `--bridges-only` / `--peer-only` / `--limit-only` run one side (for profiling under callgrind or perf).
    var side: Side = .both
    /// `--once`: run the chosen side once after one warm-up, between callgrind's zero/dump client
    /// requests (Benchmarks/callgrind), and print `ONCE <case> side=… sent=… delivered=…`.
    var once = false
    /// `--count=N`: every case sends N elements (calls), whatever the mode.
    var count: Int? = nil
    /// `--exact`: filters name whole cases, not prefixes.
    var exact = false
    /// `--list`: print `CASE <name> [limit]` for every selected case and run nothing.
    var list = false

    /// Scales an element count down in quick mode; `--count=N` overrides both.
    func n(_ full: Int, quick q: Int) -> Int { count ?? (quick ? q : full) }

    func wants(_ name: String) -> Bool {
        filters.isEmpty || filters.contains { exact ? name == $0 : name.hasPrefix($0) }
    }
}

/// Runs `bridges` and `peer` (and `limit`, if given) alternately, `repetitions` times each (the
/// order rotating every time), after one untimed warm-up of each, and records the medians.
/// A `BenchFailure` from either side is recorded under the case's name and ends the case.
///
/// - `noClaim`: the peer is not like for like (a task producer against a thread, unlimited demand
///   against one-at-a-time); the row is printed with both figures but no speedup and no RATIO line.
/// - `lossy`: figures are per *delivered* element, with the delivered share; a speedup is claimed
///   only when both sides delivered the same share (within 5 %, relative).
@MainActor
func compare(
    _ name: String,
    peer peerName: String,
    lossy: Bool = false,
    noClaim: String? = nil,
    config: Config,
    bridges: () async throws -> Sample,
    peer: () async throws -> Sample,
    limit: (() async throws -> Sample)? = nil
) async {
    guard config.wants(name) else { return }
    if config.list {
        print("CASE \(name)\(limit == nil ? "" : " limit")")
        return
    }
    Watchdog.shared.enter(name)
    let caseStart = ContinuousClock.now
    defer {
        print(
            "    (\(name) took \(caseStart.duration(to: .now).formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1)))))"
        )
    }
    if config.side != .both {
        if config.side == .limit && limit == nil {
            print("  \(name): has no limit side")
            return
        }
        func side() async throws -> Sample {
            switch config.side {
            case .bridges, .both: try await bridges()
            case .peer: try await peer()
            case .limit: try await limit!()
            }
        }
        do {
            if config.once {
                _ = try await side()  // warm-up: first-call costs (symbol binding, metadata) stay out
                bench_callgrind_zero()
                let s = try await side()
                bench_callgrind_dump()
                print(
                    "ONCE \(name) side=\(config.side.rawValue) sent=\(s.sent) delivered=\(s.delivered) ns=\(fmt(s.nanoseconds, 0))"
                )
            } else {
                for _ in 0...config.repetitions { _ = try await side() }
                print("  \(name): ran the \(config.side.rawValue) side only")
            }
        } catch {
            Report.shared.failures.append("\(name): \(error)")
        }
        return
    }
    var b: [Sample] = []
    var p: [Sample] = []
    var l: [Sample] = []
    do {
        _ = try await bridges()
        _ = try await peer()
        if let limit { _ = try await limit() }
        for rep in 0..<config.repetitions {
            // Rotate the order, so no side always runs right after the same other one.
            var order: [Int] = limit == nil ? [0, 1] : [0, 1, 2]
            for _ in 0..<(rep % order.count) { order.append(order.removeFirst()) }
            for side in order {
                switch side {
                case 0: b.append(try await bridges())
                case 1: p.append(try await peer())
                default: l.append(try await limit!())
                }
            }
        }
    } catch {
        Report.shared.failures.append("\(name): \(error)")
        print("FAIL \(name): \(error)")
        return
    }
    func perElement(_ s: Sample) -> Double {
        lossy ? s.nanoseconds / Double(max(s.delivered, 0)) : s.nsPerElement
    }
    func spread(_ s: [Sample]) -> Double {
        let v = s.map(perElement).filter(\.isFinite)
        guard !v.isEmpty else { return .nan }
        return ((v.max() ?? 0) - (v.min() ?? 0)) / median(v)
    }
    func delivery(_ s: [Sample]) -> Double {
        median(s.map { Double($0.delivered) / Double(max($0.sent, 1)) })
    }
    var row = Report.Row(
        name: name,
        bridges: median(b.map(perElement)),
        peer: median(p.map(perElement)),
        peerName: peerName,
        bridgesDelivery: lossy ? delivery(b) : nil,
        peerDelivery: lossy ? delivery(p) : nil,
        spread: (spread(b), spread(p)),
        limit: l.isEmpty ? nil : median(l.map(perElement)),
        noClaim: noClaim
    )
    if lossy, row.noClaim == nil, let bd = row.bridgesDelivery, let pd = row.peerDelivery {
        if bd == 0 || pd == 0 {
            row.noClaim = "nothing delivered on one side"
        } else if abs(bd - pd) > 0.05 * max(bd, pd) {
            row.noClaim = "deliveries differ"
        }
    }
    Report.shared.rows.append(row)
    print(progressLine(row))
}

/// Records a peer-only or bridges-only measurement (no counterpart exists).
@MainActor
func note(_ text: String) {
    Report.shared.notes.append(text)
    print("NOTE \(text)")
}

func fmt(_ x: Double, _ digits: Int = 1) -> String {
    guard x.isFinite else { return "n/a" }
    return String(format: "%.\(digits)f", x)
}

func progressLine(_ r: Report.Row) -> String {
    let unit = r.perDelivered ? "ns/delivered el" : "ns/el"
    var s = "  \(r.name): bridges \(fmt(r.bridges)) \(unit), \(r.peerName) \(fmt(r.peer)) \(unit)"
    if let limit = r.limit { s += ", limit \(fmt(limit)) \(unit)" }
    if let why = r.noClaim {
        s += ", no speedup claimed (\(why))"
    } else {
        s += ", speedup \(fmt(r.peer / r.bridges, 2))×"
    }
    if let bd = r.bridgesDelivery, let pd = r.peerDelivery {
        s += ", delivered/sent bridges \(fmt(bd * 100, 1))% peer \(fmt(pd * 100, 1))%"
    }
    return s
}

@MainActor
func printReport(config: Config, buildInfo: String) {
    let r = Report.shared
    print("")
    print(
        "Bridges benchmarks (\(config.quick ? "quick" : "full"), median of \(config.repetitions) alternating repetitions) — \(buildInfo)"
    )
    print("(lossy rows, marked *: ns per delivered element; a speedup only where both delivered the same share)")
    let header = [
        "case", "bridges ns/el", "peer", "peer ns/el", "limit ns/el", "speedup", "delivered b/p", "spread b/p",
    ]
    var table: [[String]] = [header]
    for row in r.rows {
        let delivered: String
        if let bd = row.bridgesDelivery, let pd = row.peerDelivery {
            delivered = "\(fmt(bd * 100))% / \(fmt(pd * 100))%"
        } else {
            delivered = "lossless"
        }
        table.append([
            row.name + (row.perDelivered ? " *" : ""), fmt(row.bridges), row.peerName, fmt(row.peer),
            row.limit.map { fmt($0) } ?? "—",
            row.noClaim == nil ? fmt(row.peer / row.bridges, 2) + "×" : "—",
            delivered, "\(fmt(row.spread.0 * 100, 0))% / \(fmt(row.spread.1 * 100, 0))%",
        ])
    }
    printTable(table)
    let unclaimed = r.rows.filter { $0.noClaim != nil }
    if !unclaimed.isEmpty {
        print("no speedup claimed: " + unclaimed.map { "\($0.name) (\($0.noClaim!))" }.joined(separator: "; "))
    }
    if !r.memory.isEmpty {
        print("")
        var mem: [[String]] = [["memory case", "bridges bytes", "peer", "peer bytes", "note"]]
        for m in r.memory {
            mem.append([m.name, fmt(m.bridges), m.peerName, fmt(m.peer), m.note])
        }
        printTable(mem)
    }
    if !r.notes.isEmpty {
        print("")
        for n in r.notes { print("note: \(n)") }
    }
    print("")
    for row in r.rows {
        let limit = row.limit.map { " limit=\(fmt($0, 2))" } ?? ""
        if let why = row.noClaim {
            // Not like for like, or deliveries differ: both figures, no speedup.
            print(
                "NOCLAIM \(row.name) bridges=\(fmt(row.bridges, 2)) peer=\(fmt(row.peer, 2))\(limit) reason=\"\(why)\"")
        } else {
            print(
                "RATIO \(row.name) bridges=\(fmt(row.bridges, 2)) peer=\(fmt(row.peer, 2)) speedup=\(fmt(row.peer / row.bridges, 3))\(limit)"
            )
        }
        if let bd = row.bridgesDelivery, let pd = row.peerDelivery {
            print(
                "DELIVERED \(row.name) bridges=\(fmt(bd * 100, 2))% peer=\(fmt(pd * 100, 2))% (per delivered element above)"
            )
        }
    }
    for m in r.memory {
        print("MEMORY \(m.name) bridges=\(fmt(m.bridges, 1)) peer=\(fmt(m.peer, 1))")
    }
}

func printTable(_ rows: [[String]]) {
    guard let first = rows.first else { return }
    var widths = first.map(\.count)
    for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
    for (index, row) in rows.enumerated() {
        let cells = row.enumerated().map { i, cell in
            i == 0
                ? cell.padding(toLength: widths[i], withPad: " ", startingAt: 0)
                : String(repeating: " ", count: widths[i] - cell.count) + cell
        }
        print(cells.joined(separator: "  "))
        if index == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
    }
}

/// Ends the process with a message naming the case if one case runs longer than `limit`: a hang
/// (a lost wake-up, a missed finish) must fail the run, not stall CI until its timeout.
final class Watchdog: @unchecked Sendable {
    // @unchecked Sendable: `current` and `since` are guarded by `lock`.
    static let shared = Watchdog()
    private let lock = NSLock()
    private var current = "start-up"
    private var since = DispatchTime.now()
    var limitSeconds: UInt64 = 120

    func enter(_ name: String) {
        lock.lock()
        current = name
        since = .now()
        lock.unlock()
    }

    func start() {
        let thread = Thread { [self] in
            while true {
                Thread.sleep(forTimeInterval: 1)
                lock.lock()
                let (name, elapsed) = (current, DispatchTime.now().uptimeNanoseconds - since.uptimeNanoseconds)
                lock.unlock()
                if elapsed > limitSeconds * 1_000_000_000 {
                    print(
                        "FAILED \(name): still running after \(limitSeconds) s (a hang: lost wake-up or missing finish?)"
                    )
                    fflush(nil)
                    exit(2)
                }
            }
        }
        thread.start()
    }
}
