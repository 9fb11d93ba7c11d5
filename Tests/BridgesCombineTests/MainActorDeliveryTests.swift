import Bridges
import TestSupport
import Testing

@testable import BridgesCombine

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine

/// Every publisher BridgesCombine builds calls its subscribers in the isolation it was built in.
/// A `sink` written in a `@MainActor` type is main-actor isolated, and Swift 6 checks that at
/// run time: called from a pool thread it traps (`_dispatch_assert_queue_fail`).
@Suite(.timeLimit(.minutes(3))) struct MainActorDeliveryTests {
    /// The view model users write: a main-actor class whose `sink` sets its own state.
    @MainActor final class Wallet {
        var balance = 0
        var history: [Int] = []
        var bag = Set<AnyCancellable>()
        let done = Gate()

        func load() {
            AsyncFuture<Int, Never> { 42 }
                .sink { value in
                    MainActor.assertIsolated()
                    self.balance = value  // main-actor state, no await
                    self.done.open()
                }
                .store(in: &bag)
        }

        func loadThrowing() {
            AsyncFuture<Int, any Error> { 7 }
                .sink(
                    receiveCompletion: { _ in
                        MainActor.assertIsolated()
                        self.done.open()
                    },
                    receiveValue: { value in
                        MainActor.assertIsolated()
                        self.balance = value
                    }
                )
                .store(in: &bag)
        }

        func follow(_ stream: AsyncStream<Int>) {
            stream.eraseToAnyPublisher()
                .sink(
                    receiveCompletion: { _ in
                        MainActor.assertIsolated()
                        self.done.open()
                    },
                    receiveValue: { value in
                        MainActor.assertIsolated()
                        self.history.append(value)
                    }
                )
                .store(in: &bag)
        }
    }

    @MainActor
    @Test func asyncFuture_sinkInAMainActorClass_runsOnTheMainActor() async {
        var wallet: Wallet? = Wallet()
        weak var released: AnyObject?
        released = wallet
        wallet?.load()
        await wallet?.done.wait()
        #expect(wallet?.balance == 42)
        wallet?.bag = []  // the sink captures `self`, as users write it: the bag breaks the cycle
        wallet = nil
        #expect(released == nil)
    }

    @MainActor
    @Test func asyncFuture_throwing_sinkInAMainActorClass_runsOnTheMainActor() async {
        var wallet: Wallet? = Wallet()
        weak var released: AnyObject?
        released = wallet
        wallet?.loadThrowing()
        await wallet?.done.wait()
        #expect(wallet?.balance == 7)
        wallet?.bag = []  // the sink captures `self`, as users write it: the bag breaks the cycle
        wallet = nil
        #expect(released == nil)
    }

    @MainActor
    @Test func eraseToAnyPublisher_sinkInAMainActorClass_runsOnTheMainActor() async {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        var wallet: Wallet? = Wallet()
        weak var released: AnyObject?
        released = wallet
        wallet?.follow(stream)
        continuation.yield(1)
        continuation.yield(2)
        continuation.finish()
        await wallet?.done.wait()
        #expect(wallet?.history == [1, 2])
        wallet?.bag = []  // the sink captures `self`, as users write it: the bag breaks the cycle
        wallet = nil
        #expect(released == nil)
    }
}

#endif
