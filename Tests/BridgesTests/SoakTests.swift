import Bridges
import Dispatch
import Foundation
import TestSupport
import Testing

/// Mixed workload for a fixed number of rounds; checks that counts stay exact and that memory
/// returns to its baseline. Off by default (it takes a while):
///
///     BRIDGES_SOAK=1 swift test --traits OpenCombine --filter SoakTests
///
/// `BRIDGES_SOAK_ROUNDS` overrides the number of rounds (default 200).
@Suite("Soak", .enabled(if: ProcessInfo.processInfo.environment["BRIDGES_SOAK"] != nil), .serialized)
struct SoakTests {
    static var rounds: Int { Int(ProcessInfo.processInfo.environment["BRIDGES_SOAK_ROUNDS"] ?? "") ?? 200 }

    @Test func mixedWorkload_countsStayExact_andMemoryReturnsToBaseline() async throws {
        // Warm up allocator pools and lazily created runtime structures before measuring.
        _ = try await SoakRound.run(index: -1, bridged: true)
        _ = try await SoakRound.run(index: -1, bridged: false)

        // The control does the same work (tasks, signals, dispatch, cancellation) without
        // Bridges: the Swift runtime and glibc's arenas grow a little with any such workload,
        // so what Bridges must answer for is the difference.
        let control = try await Self.measure { round in try await SoakRound.run(index: round, bridged: false) }
        let bridged = try await Self.measure { round in try await SoakRound.run(index: round, bridged: true) }
        let extra = bridged.rssDelta - control.rssDelta
        print(
            "SOAK rounds=\(Self.rounds) \(bridged.totals) rss_delta_bridged=\(bridged.rssDelta / 1024)KiB rss_delta_control=\(control.rssDelta / 1024)KiB extra=\(extra / 1024)KiB"
        )
        #expect(bridged.totals.lost == 0)
        #expect(bridged.totals.completed + bridged.totals.cancelled + bridged.totals.dropped == Self.rounds * 800)
        #expect(bridged.totals.streamsEnded == Self.rounds * 80)
        #expect(bridged.totals.teardowns == bridged.totals.streamsEnded, "one teardown per stream")
        // 200 rounds are 160 000 bridges: leaking one 32-byte object per bridge would add 5 MiB.
        #expect(extra < 2 * 1024 * 1024, "Bridges' workload grew \(extra / 1024) KiB more than the control")
    }

    static func measure(
        _ round: (Int) async throws -> SoakRound.Totals
    ) async throws -> (totals: SoakRound.Totals, rssDelta: Int) {
        trimHeap()
        let before = residentBytes()
        var totals = SoakRound.Totals()
        for index in 0..<rounds { totals.add(try await round(index)) }
        trimHeap()
        return (totals, residentBytes() - before)
    }
}

/// One round: bridges created, completed, cancelled and dropped concurrently.
enum SoakRound {
    struct Totals: CustomStringConvertible {
        var completed = 0, cancelled = 0, dropped = 0, lost = 0
        var elements = 0, streamsEnded = 0, teardowns = 0
        mutating func add(_ other: Totals) {
            completed += other.completed
            cancelled += other.cancelled
            dropped += other.dropped
            lost += other.lost
            elements += other.elements
            streamsEnded += other.streamsEnded
            teardowns += other.teardowns
        }
        var description: String {
            "completed=\(completed) cancelled=\(cancelled) dropped=\(dropped) lost=\(lost) "
                + "stream_elements=\(elements) streams=\(streamsEnded) teardowns=\(teardowns)"
        }
    }

    static let queue = DispatchQueue(label: "soak.legacy", attributes: .concurrent)

    static func run(index: Int, bridged: Bool) async throws -> Totals {
        try await withThrowingTaskGroup(of: Totals.self) { group in
            for worker in 0..<8 {
                group.addTask { try await singleShots(seed: index &* 31 &+ worker, bridged: bridged) }
            }
            for worker in 0..<4 {
                group.addTask { await streams(seed: index &* 17 &+ worker, bridged: bridged) }
            }
            var totals = Totals()
            for try await result in group { totals.add(result) }
            return totals
        }
    }

    /// 100 single-shot bridges: a third complete, a third are cancelled mid-flight, a third drop.
    static func singleShots(seed: Int, bridged: Bool) async throws -> Totals {
        var totals = Totals()
        for i in 0..<100 {
            let kind = (seed &+ i) % 3
            let api = LegacyAPI<@Sendable (Result<Int, Never>) -> Void>()
            let task = Task {
                if !bridged { return try await controlCall(api, kind: kind) }
                return try await Diagnostics.withHandler({ _ in }) {
                    try await withCallback { done in api.start(done) }
                }
            }
            await api.started.wait()
            switch kind {
            case 0: queue.async { api.stored(.success(i)) }
            case 1: task.cancel()
            default: queue.async { api.drop() }
            }
            switch await task.result {
            case .success(let value): if value == i { totals.completed += 1 } else { totals.lost += 1 }
            case .failure(let error as BridgeError) where error == .callbackDropped: totals.dropped += 1
            case .failure(let error) where error is CancellationError: totals.cancelled += 1
            case .failure: totals.lost += 1
            }
            api.drop()
        }
        return totals
    }

    /// 20 streams: half drained to the end (every element, in order), half abandoned early by
    /// a consumer that breaks out; the teardown runs once for each.
    static func streams(seed: Int, bridged: Bool) async -> Totals {
        var totals = Totals()
        for i in 0..<20 {
            let breakEarly = (seed &+ i) % 2 == 1
            let teardowns = Collected<Void>()
            var received = 0
            var expected = 0
            if bridged {
                let policy: BufferingPolicy = (seed &+ i) % 4 < 2 ? .unbounded : .suspending(8)
                let stream = CallbackStream<Int, Never>(buffering: policy) { sink in
                    let producer = Task {
                        for value in 0..<50 where await sink.send(value) == .terminated { return }
                        sink.finish()
                    }
                    return Cancellation {
                        producer.cancel()
                        teardowns.append(())
                    }
                }
                for await value in stream {
                    if value != received { totals.lost += 1 }
                    received += 1
                    if breakEarly && received == 10 { break }
                }
            } else {
                let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
                let producer = Task {
                    for value in 0..<50 { continuation.yield(value) }
                    continuation.finish()
                }
                continuation.onTermination = { _ in
                    producer.cancel()
                    teardowns.append(())
                }
                for await value in stream {
                    if value != received { totals.lost += 1 }
                    received += 1
                    if breakEarly && received == 10 { break }
                }
            }
            expected = breakEarly ? 10 : 50
            if received != expected { totals.lost += 1 }
            totals.elements += received
            totals.streamsEnded += 1
            totals.teardowns += teardowns.count
        }
        return totals
    }

    /// The control: the same legacy call awaited by hand, with no bridge.
    static func controlCall(_ api: LegacyAPI<@Sendable (Result<Int, Never>) -> Void>, kind: Int) async throws -> Int {
        let done = Signal()
        let value = Collected<Int>()
        _ = api.start { result in
            if case .success(let v) = result { value.append(v) }
            done.open()
        }
        if kind != 0 { done.open() }  // cancelled or dropped: nothing will call back
        await done.wait()
        switch kind {
        case 0: return value.values.first ?? -1
        case 1: throw CancellationError()
        default: throw BridgeError.callbackDropped
        }
    }
}

/// Resident set size from /proc/self/statm (Linux); 0 elsewhere.
func residentBytes() -> Int {
    #if os(Linux)
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    #else
    return 0
    #endif
}

/// Asks glibc to hand freed memory back to the OS (`malloc_trim(0)`, looked up at run time:
/// it is not in Glibc's module map), so that RSS measures live memory rather than what the
/// allocator's per-thread arenas keep for reuse.
func trimHeap() {
    #if canImport(Glibc)
    typealias MallocTrim = @convention(c) (Int) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
    _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
    #endif
}
