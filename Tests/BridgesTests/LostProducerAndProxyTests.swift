// The natural delegate code (a proxy the manager holds weakly, a teardown that does not capture
// it) and a lost producer of a stream typed by the app's own error.
// The app code is a Swift 6 `@MainActor` view model over the Swift 5 legacy SDK.
import Bridges
import BridgesTesting
import LegacySDK
import TestSupport
import Testing

/// The app's own failure type, which can carry why Bridges ended a stream.
enum FeedError: Error, Equatable, BridgeErrorConvertible {
    case network(Int)
    case bridge(BridgeError)
    init(bridgeError: BridgeError) { self = .bridge(bridgeError) }
}

/// A failure type that cannot.
struct PlainFeedError: Error, Equatable {}

/// The delegate as a plain class of the app's own (not a `DelegateProxy`).
final class LocationRelay: LegacyLocationDelegate {
    let sink: CallbackStream<Location, any Error>.Sink
    init(_ sink: CallbackStream<Location, any Error>.Sink) { self.sink = sink }
    func locationManager(_ manager: LegacyLocationManager, didUpdate location: Location) { sink.yield(location) }
    func locationManager(_ manager: LegacyLocationManager, didFailWithError error: Error) {
        sink.finish(throwing: error)
    }
}

@MainActor final class NaturalLocationScreen {
    let manager = LegacyLocationManager()

    /// What a user writes first: the teardown does not mention the proxy.
    func locations() -> CallbackStream<Location, any Error> {
        CallbackStream(buffering: .unbounded) { [manager] sink in
            let proxy = LocationEvents(sink)
            manager.delegate = proxy
            manager.start()
            return Cancellation {
                manager.stop()
                manager.delegate = nil
            }
        }
    }

    /// The same with a delegate class of the app's own, kept by `keepUntilTeardown`.
    func relayedLocations() -> CallbackStream<Location, any Error> {
        CallbackStream(buffering: .unbounded) { [manager] sink in
            let relay = LocationRelay(sink)
            sink.keepUntilTeardown(relay)
            manager.delegate = relay
            manager.start()
            return Cancellation {
                manager.stop()
                manager.delegate = nil
            }
        }
    }
}

@Suite("Delegate proxies kept by their stream; a typed stream's lost producer", .timeLimit(.minutes(3)))
@MainActor
struct LostProducerAndProxyTests {
    // MARK: - A proxy the manager holds weakly

    @Test(arguments: [false, true])
    func proxyTheManagerHoldsWeakly_isKeptUntilTheTeardownRan_thenReleased(ownClass: Bool) async throws {
        try await withLeakTracking { tracker in
            let screen = NaturalLocationScreen()
            let manager = screen.manager
            tracker.track(manager)
            manager.onStart = { [weak manager] in manager?.simulate(Location(latitude: 1, longitude: 2)) }
            var iterator = (ownClass ? screen.relayedLocations() : screen.locations()).makeAsyncIterator()
            let first = try await iterator.next(isolation: MainActor.shared)
            #expect(first?.latitude == 1)
            let delegate = WeakProbe(manager.delegate)
            #expect(delegate.object != nil, "nothing but the stream holds the proxy, and it is alive")
            manager.simulate(Location(latitude: 3, longitude: 4))
            let second = try await iterator.next(isolation: MainActor.shared)
            #expect(second?.latitude == 3, "the proxy forwarded the reading after the builder returned: no sinkDropped")
            _ = consume iterator  // the loop ends on the main actor: its teardown has run
            #expect(manager.stopCount == 1 && manager.delegate == nil)
            #expect(delegate.object == nil, "released once the teardown ran")
        }
    }

    // MARK: - A typed stream's lost producer

    nonisolated static func lostProducerStream<Failure: Error>(_: Failure.Type) -> CallbackStream<Int, Failure> {
        CallbackStream.synchronous(buffering: .unbounded) { sink in
            sink.yield(1)
            return Cancellation()  // the sink is released here, never finished
        }
    }

    @Test func typedStream_whoseFailureCarriesBridgeErrors_throwsSinkDropped() async {
        await expectDiagnostics([.sinkDropped]) {
            var values: [Int] = []
            do throws(FeedError) {
                for try await value in Self.lostProducerStream(FeedError.self) { values.append(value) }
                Issue.record("the loop ended as if complete")
            } catch {
                #expect(error == .bridge(.sinkDropped))
            }
            #expect(values == [1])
        }
    }

    /// A typed failure that cannot carry it ends with nil, as documented, and the report says
    /// how to make it throw.
    @Test func typedStream_whoseFailureCannotCarryIt_endsWithNil_andTheReportSaysWhatToDo() async throws {
        let messages = Collected<String>()
        try await Diagnostics.withHandler({ messages.append($0.message) }) { () async throws in
            var values: [Int] = []
            for try await value in Self.lostProducerStream(PlainFeedError.self) { values.append(value) }
            #expect(values == [1])
        }
        #expect(messages.values.count == 1)
        #expect(
            messages.values.first?.contains("conform PlainFeedError to BridgeErrorConvertible") == true,
            "\(messages.values)")
    }

    @Test func typedThrowingBroadcast_released_throwsSinkDropped() async {
        var broadcast: ThrowingBroadcast<Int, FeedError>? = ThrowingBroadcast()
        let stream = broadcast!.stream()
        let consumer = Task { () -> FeedError? in
            do throws(FeedError) {
                for try await _ in stream {}
                return nil
            } catch {
                return error
            }
        }
        await broadcast!.waitForSubscribers(1)
        broadcast = nil
        #expect(await consumer.value == .bridge(.sinkDropped))
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func sharedOverATypedStream_lostProducer_throwsSinkDropped() async {
        await expectDiagnostics([.sinkDropped]) {
            let shared = Self.lostProducerStream(FeedError.self).shared()
            var values: [Int] = []
            do throws(FeedError) {
                for try await value in shared { values.append(value) }
                Issue.record("the loop ended as if complete")
            } catch {
                #expect(error == .bridge(.sinkDropped))
            }
            #expect(values == [1])
        }
    }
}
