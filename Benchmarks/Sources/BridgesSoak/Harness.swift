// The soak's harness: runs one kind of bridge many times on a few concurrent lanes, then checks
// that the heap came back to its baseline, that every tracked object was released, and that the
// element and report counts are exact.

import Bridges
import CMallocInfo
import Dispatch
import Foundation
import Synchronization

// MARK: - Live objects

/// Objects alive that the soak made and handed to a bridge (a legacy API, a delegate source, an
/// owner). Each increments it in `init` and decrements it in `deinit`: if a bridge leaked what it
/// was given, this stays above zero.
let liveObjects = Atomic<Int>(0)

/// Something a bridge holds on the soak's behalf: a legacy API, a delegate source, an owner.
class Tracked: @unchecked Sendable {  // no mutable state; subclasses that add some guard it
    init() { liveObjects.add(1, ordering: .relaxed) }
    deinit { liveObjects.subtract(1, ordering: .relaxed) }
}

/// A weak reference to the last object of a kind, checked after the run as well.
final class LastObject: Sendable {
    private let slot = Mutex<WeakSlot>(WeakSlot())
    struct WeakSlot { weak var object: Tracked? }
    func set(_ object: Tracked) { slot.withLock { $0.object = object } }
    var isReleased: Bool { slot.withLock { $0.object == nil } }
    func reset() { slot.withLock { $0.object = nil } }
}

// MARK: - Reports through the default handler

/// The default handler during the soak: counts reports per kind and keeps the latest one so a
/// case can read its live ``BridgeDiagnostic/occurrences`` after the flood.
final class ReportCounter: Sendable {
    private struct State {
        var counts: [String: Int] = [:]
        var occurrences = 0
    }
    private let state = Mutex(State())

    var handler: Diagnostics.Handler {
        { [self] diagnostic in
            state.withLock { $0.counts[diagnostic.kind.description, default: 0] += 1 }
            if diagnostic.kind == .excessEmission {
                // Its live count is read when the run is over (`settleFloods`).
                pendingFlood.withLock { $0.append(diagnostic) }
            }
        }
    }

    /// Excess-emission reports whose final count the case has not read yet.
    let pendingFlood = Mutex<[BridgeDiagnostic]>([])

    /// Adds the live occurrence counts of the pending flood reports, and forgets them.
    func settleFloods() {
        let pending = pendingFlood.withLock { pending -> [BridgeDiagnostic] in
            defer { pending = [] }
            return pending
        }
        let total = pending.reduce(0) { $0 + $1.occurrences }
        state.withLock { $0.occurrences += total }
    }

    func take() -> (counts: [String: Int], occurrences: Int) {
        state.withLock { state in
            defer { state = State() }
            return (state.counts, state.occurrences)
        }
    }
}

let reports = ReportCounter()

// MARK: - Cases

struct SoakCase: Sendable {
    let name: String
    let ops: Int
    /// Elements each op delivers to its consumer (or `nil`: the op checks its own counts and
    /// returns the number of elements it was promised).
    let elementsPerOp: Int
    /// Reports each op must make, per kind, through the default handler.
    let reportsPerOp: [BridgeDiagnostic.Kind: Int]
    /// Occurrences counted after the first report, per op (excess emissions only).
    let occurrencesPerOp: Int
    /// Ops run at once (each lane runs `ops / lanes` in sequence).
    let lanes: Int
    /// Heap growth allowed whatever the op count (see `heapTolerance`).
    let tolerance: Int
    let last = LastObject()
    /// Runs op `index`; returns the number of elements the consumer received.
    let op: @Sendable (_ index: Int, _ last: LastObject) async throws -> Int

    init(
        _ name: String, ops: Int = 100_000, elements: Int, reports: [BridgeDiagnostic.Kind: Int] = [:],
        occurrences: Int = 0, lanes: Int = 4, tolerance: Int = heapTolerance,
        _ op: @escaping @Sendable (_ index: Int, _ last: LastObject) async throws -> Int
    ) {
        self.name = name
        self.ops = ops == 1 ? 1 : Int((Double(ops) * opsScale).rounded())
        self.elementsPerOp = elements
        self.reportsPerOp = reports
        self.occurrencesPerOp = occurrences
        self.lanes = lanes
        self.tolerance = tolerance
        self.op = op
    }
}

struct SoakResult {
    let name: String
    let ops: Int
    let elements: Int
    let reports: Int
    let heapDelta: Int
    let seconds: Double
    var failures: [String]
    var bytesPerOp: Double { Double(heapDelta) / Double(ops) }
}

/// `BRIDGES_SOAK_SCALE=4` runs four times as many ops of each kind (to tell a leak, which grows
/// with the ops, from the runtime's one-off growth, which does not).
let opsScale = Double(ProcessInfo.processInfo.environment["BRIDGES_SOAK_SCALE"] ?? "") ?? 1

func allocatedBytes() -> Int { Int(bench_allocated_bytes()) }

/// Heap growth a kind may leave behind whatever its op count: runtime caches, dispatch's thread
/// pool and continuation caches, the ledger's table (seen: up to ~120 KiB once, under load;
/// 4× the ops leave the same). A leak of one 16-byte object per op is 1.6 MB over 100 000 ops.
let heapTolerance = 256 * 1024

func runLanes(_ soak: SoakCase, ops: Int, first: Int) async throws -> Int {
    try await withThrowingTaskGroup(of: Int.self) { group in
        let perLane = ops / soak.lanes
        for lane in 0..<soak.lanes {
            let count = lane == soak.lanes - 1 ? ops - perLane * (soak.lanes - 1) : perLane
            let start = first + lane * perLane
            group.addTask {
                var elements = 0
                for index in start..<(start + count) { elements += try await soak.op(index, soak.last) }
                return elements
            }
        }
        return try await group.reduce(0, +)
    }
}

/// Waits (bounded) for objects released asynchronously after their op returned: a task's
/// teardown, a bag cancelled on another thread. Polling here is fine: this is a soak, not a test.
func settle() async {
    for _ in 0..<2_000 where liveObjects.load(ordering: .relaxed) != 0 {
        try? await Task.sleep(for: .milliseconds(1))
    }
    try? await Task.sleep(for: .milliseconds(5))
}

func run(_ soak: SoakCase) async -> SoakResult {
    let started = ContinuousClock.now
    var failures: [String] = []
    do {
        // Warm up: allocator pools, metadata caches, dispatch threads, lazily made globals.
        let warmOps = max(soak.lanes, min(2_000, soak.ops / 10))
        _ = try await runLanes(soak, ops: warmOps, first: -warmOps - 1)
        await settle()
        reports.settleFloods()
        _ = reports.take()
        soak.last.reset()

        let baseline = allocatedBytes()
        let elements = try await runLanes(soak, ops: soak.ops, first: 0)
        await settle()
        reports.settleFloods()
        let heapDelta = allocatedBytes() - baseline
        let (counts, occurrences) = reports.take()

        if elements != soak.ops * soak.elementsPerOp {
            failures.append("elements \(elements), expected \(soak.ops * soak.elementsPerOp)")
        }
        let expected = Dictionary(
            uniqueKeysWithValues: soak.reportsPerOp.map { ($0.key.description, $0.value * soak.ops) })
        if counts != expected { failures.append("reports \(counts), expected \(expected)") }
        if occurrences != soak.occurrencesPerOp * soak.ops {
            failures.append("occurrences \(occurrences), expected \(soak.occurrencesPerOp * soak.ops)")
        }
        let live = liveObjects.load(ordering: .relaxed)
        if live != 0 { failures.append("\(live) tracked objects still alive") }
        if !soak.last.isReleased { failures.append("the last object made is still alive (weak reference)") }
        if heapDelta > soak.tolerance { failures.append("heap grew \(heapDelta) B (> \(soak.tolerance) B)") }
        let reportTotal = counts.values.reduce(0, +)
        return SoakResult(
            name: soak.name, ops: soak.ops, elements: elements, reports: reportTotal, heapDelta: heapDelta,
            seconds: seconds(since: started), failures: failures
        )
    } catch {
        failures.append("threw \(error)")
        return SoakResult(
            name: soak.name, ops: soak.ops, elements: 0, reports: 0, heapDelta: 0, seconds: seconds(since: started),
            failures: failures)
    }
}

func seconds(since start: ContinuousClock.Instant) -> Double {
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

// MARK: - Small helpers the cases share

/// Opens once; `wait()` returns once it is open. For holding a consumer until a flood is over.
final class OneShotGate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [UnsafeContinuation<Void, Never>])>((false, []))
    func open() {
        let waiters = state.withLock { state -> [UnsafeContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
    func wait() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let isOpen = state.withLock { state -> Bool in
                if !state.open { state.waiters.append(continuation) }
                return state.open
            }
            if isOpen { continuation.resume() }
        }
    }
}

/// A thread-safe count, for elements a consumer received on some other thread or `onDrop`.
final class Count: Sendable {
    private let value = Atomic<Int>(0)
    func add(_ n: Int = 1) { value.add(n, ordering: .relaxed) }
    var current: Int { value.load(ordering: .relaxed) }
}

func pad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
}

func lpad(_ s: String, _ width: Int) -> String {
    s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
}
