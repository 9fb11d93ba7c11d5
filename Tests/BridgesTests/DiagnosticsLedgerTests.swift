import Bridges
import Dispatch
import Testing

/// Misuse is reported once per bridge and kind, with a running count; reading the default
/// handler never grows anything. Tests that set `Diagnostics.defaultHandler` restore it, and
/// count only the diagnostics of their own kind or file, so tests running beside them (which
/// use task-local handlers) neither disturb them nor are disturbed.
@Suite("Diagnostics: the default handler and once-per-bridge reports", .serialized, .timeLimit(.minutes(3)))
struct DiagnosticsLedgerTests {
    // MARK: - Reading the default handler

    /// Before the fix each read wrapped the handler in one more reabstraction thunk: 100 000
    /// reads grew the heap by ~9.4 MB and calling the handler then overflowed the stack.
    @Test func defaultHandler_read200000Times_isTheSameHandler_andCallable() {
        let marker = BridgeDiagnostic.Kind.other("defaultHandlerReads-\(UInt64.random(in: 0...UInt64.max))")
        let seen = Collected<String>()
        let previous = Diagnostics.defaultHandler
        defer { Diagnostics.defaultHandler = previous }
        Diagnostics.defaultHandler = { diagnostic in
            if diagnostic.kind == marker { seen.append(diagnostic.message) }
        }
        var handler = Diagnostics.defaultHandler
        for _ in 0..<200_000 { handler = Diagnostics.defaultHandler }
        handler(BridgeDiagnostic(kind: marker, message: "after 200 000 reads", fileID: #fileID, line: #line))
        Diagnostics.current(BridgeDiagnostic(kind: marker, message: "through current", fileID: #fileID, line: #line))
        #expect(seen.values == ["after 200 000 reads", "through current"])
    }

    /// What the default handler writes on Linux (and `printToStandardError` everywhere): a line
    /// compilers and editors read as a warning at the bridge's line.
    @Test func standardErrorLine_isCompilerStyle_atTheBridgesCallSite() {
        let diagnostic = BridgeDiagnostic(
            kind: .callbackCalledTwice, message: "ignored", fileID: "App/Profile.swift", line: 42)
        #expect(
            diagnostic.compilerStyleLine
                == "App/Profile.swift:42: warning: Bridges misuse (callbackCalledTwice): ignored")
    }

    // MARK: - Once per bridge and kind

    @Test func callbackCalledManyTimes_isReportedOnce_withEveryCallCounted() async throws {
        let (value, diagnostics) = try await capturingDiagnostics {
            try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                for value in 0..<10_000 { done(.success(value)) }
            }
        }
        #expect(value == 0)
        #expect(diagnostics.map(\.kind) == [.callbackCalledTwice])
        #expect(diagnostics.first?.occurrences == 9_999)
    }

    @Test func everyMisusedBridge_isReportedOnce_andTheLedgerStaysBounded() async throws {
        let bridges = 5_000
        let (_, diagnostics) = try await capturingDiagnostics {
            for _ in 0..<bridges {
                _ = try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                    done(.success(1))
                    done(.success(2))
                    done(.success(3))
                }
            }
        }
        // A new bridge at a reused address is a new bridge: each is reported, each counted apart.
        #expect(diagnostics.count == bridges)
        #expect(diagnostics.allSatisfy { $0.kind == .callbackCalledTwice && $0.occurrences == 2 })
        // Dead bridges' entries are swept as the table grows (others' tests add a few live ones).
        #expect(MisuseLedger.entryCount < 1_000)
    }

    @Test func secondFinish_isReportedAsFinishCalledTwice_once() async {
        let probe = StreamProbe()
        let box = SinkBox<Int, Never>()
        let (_, diagnostics) = await capturingDiagnostics {
            let stream = CallbackStream<Int, Never>.probed(probe, box: box) { sink in
                sink.yield(1)
                sink.finish()
                sink.finish()
                sink.finish()
            }
            var received: [Int] = []
            for await value in stream { received.append(value) }
            #expect(received == [1])
        }
        #expect(diagnostics.map(\.kind) == [.finishCalledTwice])
        #expect(diagnostics.first?.occurrences == 2)
        box.clear()
        await probe.proxyReleased.wait()
        #expect(probe.teardowns.value == 1)
    }

    @Test func sinkReleasedWithoutFinish_isReportedAsSinkDropped() async {
        let (received, diagnostics) = await capturingDiagnostics {
            let stream = CallbackStream<Int, Never> { sink in
                sink.yield(1)
                return Cancellation()
            }
            var received: [Int] = []
            for await value in stream { received.append(value) }
            return received
        }
        #expect(received == [1])
        #expect(diagnostics.map(\.kind) == [.sinkDropped])
    }

    /// Through the *default* handler (no task-local one): a flood of misuse of one bridge is one
    /// call of the handler, and the ledger keeps counting after it.
    @Test func flood_throughTheDefaultHandler_isOneReport_withALiveCount() async throws {
        let seen = Collected<BridgeDiagnostic>()
        let previous = Diagnostics.defaultHandler
        defer { Diagnostics.defaultHandler = previous }
        Diagnostics.defaultHandler = { diagnostic in
            if diagnostic.fileID == #fileID { seen.append(diagnostic) }
        }
        let broadcast = Broadcast<Int>()
        weak var released: AnyObject?
        released = broadcast
        broadcast.finish()
        for value in 0..<1_000 { broadcast.yield(value) }
        #expect(seen.values.map(\.kind) == [.yieldAfterFinish])
        let gate = Signal()
        let value = try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
            DispatchQueue.global().async {
                for value in 0..<1_000 { done(.success(value)) }
                gate.open()
            }
        }
        await gate.wait()
        #expect(value == 0)
        let reports = seen.values
        #expect(reports.map(\.kind) == [.yieldAfterFinish, .callbackCalledTwice])
        #expect(reports.last?.occurrences == 999)  // read after the flood: the live count
        _ = consume broadcast
        #expect(released == nil)
    }

    /// GUARANTEES.md's before/after for ``BridgeDiagnostic/occurrences``.
    @Test func occurrences_readAfterTheFlood_countEveryMisuse() async throws {
        let flooded = Collected<BridgeDiagnostic>()
        do {
            // snippet:begin occurrences.before
            let handler: Diagnostics.Handler = { diagnostic in
                print(diagnostic)  // before: one line per misuse, 20 000 for one flooding publisher
            }
            // snippet:end occurrences.before
            _ = handler
        }
        // snippet:begin occurrences.after
        let handler: Diagnostics.Handler = { diagnostic in
            print(diagnostic)  // now: one line per bridge and kind
            flooded.append(diagnostic)  // read diagnostic.occurrences later: every misuse counted
        }
        // snippet:end occurrences.after
        let value = try await Diagnostics.withHandler(handler) {
            try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                for value in 0..<100 { done(.success(value)) }
            }
        }
        #expect(value == 0)
        #expect(flooded.values.map(\.kind) == [.callbackCalledTwice])
        #expect(flooded.values.first?.occurrences == 99)
    }

    @Test func handMadeDiagnostic_countsOne() {
        #expect(BridgeDiagnostic(kind: .other("x"), message: "", fileID: "", line: 0).occurrences == 1)
    }
}
