import Dispatch
import TestSupport
import Testing

@testable import Bridges

/// What a person reading a report sees: each message says what happened and what to change,
/// and a sink's misuse is reported at the offending call.
@Suite("Diagnostics: messages", .timeLimit(.minutes(3)))
struct DiagnosticMessagesTests {
    @Test func callbackCalledTwice_saysToCallOnce_orToUseAStream() async throws {
        let (_, diagnostics) = try await capturingDiagnostics {
            try await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in
                done(.success(1))
                done(.success(2))
            }
        }
        #expect(diagnostics.map(\.kind) == [.callbackCalledTwice])
        let message = try #require(diagnostics.first?.message)
        #expect(message.contains("the extra call was ignored"))
        #expect(message.contains("Call it exactly once per operation"))
        #expect(message.contains("bridge it with CallbackStream"))
        #expect(diagnostics.first?.fileID == #fileID)
    }

    @Test func callbackDropped_saysToCallOnEveryPath_orToReturnACancellation() async {
        let (_, diagnostics) = await capturingDiagnostics {
            _ = try? await withCallback { (done: @escaping @Sendable (Result<Int, Never>) -> Void) in _ = done }
        }
        #expect(diagnostics.map(\.kind) == [.callbackDropped])
        let message = diagnostics.first?.message ?? ""
        #expect(message.contains("released its completion handler without calling it"))
        #expect(message.contains("Make every path of the API call it once"))
        #expect(message.contains("return a Cancellation from the body"))
    }

    @Test func callbackWithoutValueOrError_saysHowToMapANilNilAnswer() async {
        let (_, diagnostics) = await capturingDiagnostics {
            let _: Int? = try? await withCallback { done in done(nil, nil) }
        }
        #expect(diagnostics.map(\.kind) == [.callbackWithoutValueOrError])
        let message = diagnostics.first?.message ?? ""
        #expect(message.contains("called with nil for both"))
        #expect(message.contains("bridge it with the Result shape and map it yourself"))
    }

    @Test func sinkDropped_saysToKeepTheSink_andToFinish() async {
        let (_, diagnostics) = await capturingDiagnostics {
            let stream = CallbackStream<Int, Never> { _ in Cancellation() }
            for await _ in stream {}
        }
        #expect(diagnostics.map(\.kind) == [.sinkDropped])
        let message = diagnostics.first?.message ?? ""
        #expect(message.contains("without calling finish()"))
        #expect(message.contains("Keep the sink for as long as the source can produce"))
    }

    /// `finish(throwing:)` after the consumer left: at the call, naming where the stream was made.
    @Test func finishThrowingAfterTheConsumerLeft_isReportedAtTheCall() async throws {
        let box = SinkBox<Int, TestError>()
        let probe = StreamProbe()
        let (line, diagnostics) = try await capturingDiagnostics { () async throws -> UInt in
            let stream = CallbackStream<Int, TestError>.probed(probe, box: box) { sink in sink.yield(1) }
            for try await _ in stream { break }
            let line: UInt = #line + 1  // the next line's
            box.sink.finish(throwing: TestError(code: 3))
            return line
        }
        #expect(diagnostics.map(\.kind) == [.yieldAfterFinish])
        #expect(diagnostics.first?.fileID == #fileID)
        #expect(diagnostics.first?.line == line)
        let message = diagnostics.first?.message ?? ""
        #expect(message.contains("the error reached nobody: TestError(code: 3)"))
        #expect(message.contains("the stream was made at BridgesTests/CallbackStreamSupport.swift:"))
        box.clear()
        await probe.proxyReleased.wait()
    }

    /// The teardown finished the stream when the consumer left; an error passed later from
    /// outside is a second finish, and its message carries the error, which reached nobody.
    @Test func finishThrowingAfterTheTeardownFinished_isReportedWithItsError() async throws {
        let box = SinkBox<Int, TestError>()
        let (_, diagnostics) = try await capturingDiagnostics {
            let stream = CallbackStream<Int, TestError> { sink in
                box.set(sink)
                sink.yield(1)
                return Cancellation { sink.finish() }
            }
            for try await _ in stream { break }
            box.sink.finish(throwing: TestError(code: 4))
        }
        #expect(diagnostics.map(\.kind) == [.finishCalledTwice])
        #expect(diagnostics.first?.message.hasPrefix("finish(throwing: TestError(code: 4)) was called") == true)
        #expect(diagnostics.first?.fileID == #fileID)
        box.clear()
    }

    /// A misuse placed at the offending call, unless that call is in one of the package's own
    /// adapters: then at the bridge's site, the user's.
    @Test func offendingCallSite_insideThePackage_isReportedAtTheBridgesSite() {
        let reports = Collected<BridgeDiagnostic>()
        Diagnostics.withHandler({ reports.append($0) }) {
            let site = CallSite(fileID: "App/Feed.swift", line: 7)
            site.report(.other("a"), "user's call", bridge: nil, at: "App/Producer.swift", line: 3)
            site.report(.other("b"), "adapter's call", bridge: nil, at: "Bridges/Broadcast.swift", line: 228)
            site.report(
                .other("c"), "adapter's call", bridge: nil, at: "BridgesCombine/StreamSubscriber.swift", line: 245)
        }
        #expect(
            reports.values.map { "\($0.fileID):\($0.line)" } == [
                "App/Producer.swift:3", "App/Feed.swift:7", "App/Feed.swift:7",
            ])
    }

    @Test func broadcastSendAfterFinish_saysToStopOrToMakeANewBroadcast() async {
        let (_, diagnostics) = await capturingDiagnostics {
            let broadcast = Broadcast<Int>()
            broadcast.finish()
            #expect(broadcast.yield(1) == .terminated)
        }
        #expect(diagnostics.map(\.kind) == [.yieldAfterFinish])
        let message = diagnostics.first?.message ?? ""
        #expect(message.contains("an element was yielded or sent to a Broadcast after finish()"))
        #expect(message.contains("Stop sending once the broadcast is finished"))
    }

    /// Reads as a sentence: the type, how long, what to look for.
    @Test func expectRelease_saysWhatToLookFor() async {
        let source = TrackedStream(Int.self)
        let gone = Gate()
        let grace = Gate()
        var naive: NaiveOwner? = NaiveOwner(listeningTo: source.stream, deinitGate: gone)
        let reports = Collected<BridgeDiagnostic>()  // the report comes after the scope: collected live
        let check = Diagnostics.withHandler({ reports.append($0) }) {
            OwnerLifetimeCheck.expectRelease(of: naive!, within: .custom("0.05 seconds") { await grace.wait() })
        }
        naive = nil
        grace.open()
        #expect(await check.value == false)
        let diagnostics = reports.values
        #expect(diagnostics.map(\.kind) == [.ownerLifetime])
        #expect(
            diagnostics.first?.message.hasPrefix(
                "NaiveOwner was not released within 0.05 seconds of expectRelease(of:within:): something still holds it strongly."
            ) == true)
        #expect(diagnostics.first?.message.contains("consume the sequence with forEach(weak:in:)") == true)
        source.continuation.finish()  // only the end of the stream frees it
        await gone.wait()
    }
}
