import Testing

@testable import Bridges

@Suite("BufferingPolicy", .timeLimit(.minutes(3)))
struct BufferingPolicyTests {
    @Test func shorthands_areTheGeneralForms() {
        #expect(BufferingPolicy.latest == .dropOldest(1))
        #expect(BufferingPolicy.drop == .dropNewest(0))
        #expect(BufferingPolicy.rendezvous == .suspending(0))
        #expect(BufferingPolicy.unbounded != .suspending(Int.max))
        #expect(Set([BufferingPolicy.latest, .dropOldest(1), .drop]).count == 2)
    }

    @Test func descriptions_useTheShorthands() {
        #expect(BufferingPolicy.unbounded.description == ".unbounded")
        #expect(BufferingPolicy.dropOldest(1).description == ".latest")
        #expect(BufferingPolicy.dropNewest(0).description == ".drop")
        #expect(BufferingPolicy.suspending(0).description == ".rendezvous")
        #expect(BufferingPolicy.dropNewest(3).description == ".dropNewest(3)")
        #expect(BufferingPolicy.dropOldest(4).description == ".dropOldest(4)")
        #expect(BufferingPolicy.suspending(5).description == ".suspending(5)")
    }

    @Test func properties() {
        #expect(BufferingPolicy.unbounded.capacity == nil)
        #expect(BufferingPolicy.latest.capacity == 1)
        #expect(BufferingPolicy.suspending(7).capacity == 7)
        #expect(BufferingPolicy.latest.isLossy && BufferingPolicy.drop.isLossy && BufferingPolicy.dropNewest(2).isLossy)
        #expect(!BufferingPolicy.unbounded.isLossy && !BufferingPolicy.rendezvous.isLossy)
        #expect(BufferingPolicy.rendezvous.isWaiting && BufferingPolicy.suspending(3).isWaiting)
        #expect(!BufferingPolicy.unbounded.isWaiting && !BufferingPolicy.latest.isWaiting)
    }

    @Test func negativeCapacity_failsAtConstruction_namingTheArgument() async {
        await #expect(processExitsWith: .failure) { _ = BufferingPolicy.dropNewest(-1) }
        await #expect(processExitsWith: .failure) { _ = BufferingPolicy.suspending(-3) }
        await #expect(processExitsWith: .failure) { _ = BufferingPolicy.dropOldest(0) }
    }

    @Test func negativeCapacity_messageNamesFactoryAndArgument() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = BufferingPolicy.suspending(-3)
        }
        let message = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(message.contains("BufferingPolicy.suspending(_:): capacity must be ≥ 0, got -3"))
    }

    /// The message names the call site the public function took (`#fileID`/`#line` by default;
    /// explicit here, since an exit test's body is moved into a function of the macro's), and
    /// `fatalError` keeps it in release builds, where a `precondition`'s message is dropped.
    @Test func argumentErrors_nameTheCallersFileAndLine() async throws {
        let policy = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = BufferingPolicy.watermark(low: 4, high: 4, fileID: "App/Model.swift", line: 12)
        }
        #expect(
            String(decoding: policy.standardErrorContent, as: UTF8.self)
                .contains(
                    "BufferingPolicy.watermark(low:high:): low must be < high, got low 4, high 4 (called at App/Model.swift:12)"
                ))
        let broadcast = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Broadcast<Int>(replay: -1, fileID: "App/Feed.swift", line: 7)
        }
        #expect(
            String(decoding: broadcast.standardErrorContent, as: UTF8.self)
                .contains("Broadcast(replay:): replay must be ≥ 0, got -1 (called at App/Feed.swift:7)"))
        let shared = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = AsyncStream<Int> { $0.finish() }.shared(replay: -2, fileID: "App/Feed.swift", line: 9)
        }
        #expect(
            String(decoding: shared.standardErrorContent, as: UTF8.self)
                .contains("shared(replay:): replay must be ≥ 0, got -2 (called at App/Feed.swift:9)"))
    }

    @Test func argumentErrorMessage_namesTheArgumentAndTheCallSite() {
        #expect(
            _argumentErrorMessage("X.f(_:): n must be ≥ 0, got -1", fileID: "App/Model.swift", line: 12)
                == "X.f(_:): n must be ≥ 0, got -1 (called at App/Model.swift:12)")
    }
}
