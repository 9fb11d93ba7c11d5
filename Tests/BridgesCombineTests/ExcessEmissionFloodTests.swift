import Bridges
import BridgesCombine
import BridgesTesting
import Testing

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine

/// A publisher that ignores demand floods a `.rendezvous` stream: one report per stream, with
/// every excess element counted, and nothing lost.
@Suite(.timeLimit(.minutes(3))) struct ExcessEmissionFloodTests {
    static let flood = 20_000

    @Test func flood_underRendezvous_isReportedOnce_withOccurrencesEqualToTheFlood() async {
        let log = DiagnosticLog()
        weak var releasedUpstream: DemandRecordingPublisher<Int, Never>?
        do {
            let upstream = DemandRecordingPublisher<Int, Never>()
            releasedUpstream = upstream
            let stream = Diagnostics.withHandler(log.handler) { upstream.stream(buffering: .rendezvous) }
            let allSent = Gate()
            let consumer = Task {
                var received = 0
                for await value in stream {
                    #expect(value == received)  // in order, none lost
                    received += 1
                    // Hold the first element until the flood is over: no demand exists for the rest.
                    if received == 1 { await allSent.wait() }
                }
                return received
            }
            await upstream.waitForDemand()  // the consumer asked for one
            upstream.sendIgnoringDemand(0)  // the one it asked for
            for value in 1...Self.flood { upstream.sendIgnoringDemand(value) }  // none asked for
            upstream.send(completion: .finished)
            allSent.open()
            #expect(await consumer.value == Self.flood + 1)
            #expect(upstream.excessEmissions == Self.flood)
        }
        #expect(log.kinds == [.excessEmission])
        #expect(log.all.first?.occurrences == Self.flood)
        #expect(releasedUpstream == nil)
    }

    @Test func twoStreams_fromOneFloodingPublisher_areReportedOnceEach() async {
        let log = DiagnosticLog()
        let upstream = DemandRecordingPublisher<Int, Never>()
        let streams = Diagnostics.withHandler(log.handler) {
            [upstream.stream(buffering: .rendezvous), upstream.stream(buffering: .rendezvous)]
        }
        let allSent = Gate()
        let consumers = streams.map { stream in
            Task {
                var received = 0
                for await _ in stream {
                    received += 1
                    if received == 1 { await allSent.wait() }
                }
                return received
            }
        }
        _ = await upstream.wait { $0.activeSubscriptionCount == 2 && $0.requests.count == 2 }
        for value in 0...100 { upstream.sendIgnoringDemand(value) }
        upstream.send(completion: .finished)
        allSent.open()
        for consumer in consumers { #expect(await consumer.value == 101) }
        #expect(log.kinds == [.excessEmission, .excessEmission])
        #expect(log.all.map(\.occurrences) == [100, 100])
    }
}

#endif
