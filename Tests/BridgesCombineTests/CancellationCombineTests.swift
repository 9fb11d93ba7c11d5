import Bridges
import BridgesTesting
import Testing

@testable import BridgesCombine

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine

@Suite(.timeLimit(.minutes(3))) struct CancellationCombineTests {
    @Test func anyCancellable_fromCancellation_cancelsItOnCancel() {
        let runs = Counter()
        let token = Cancellation { runs.increment() }
        let anyCancellable = token.anyCancellable
        anyCancellable.cancel()
        anyCancellable.cancel()
        #expect(token.isCancelled)
        #expect(runs.value == 1)
    }

    @Test func setOfAnyCancellable_cancelsTheTokenWhenEmptied() {
        let runs = Counter()
        var cancellables = Set<AnyCancellable>()
        let token = Cancellation { runs.increment() }
        token.store(in: &cancellables)
        #expect(!token.isCancelled)
        cancellables.removeAll()
        #expect(token.isCancelled)
        #expect(runs.value == 1)
    }

    @Test func cancellation_isACombineCancellable() {
        let token = Cancellation()
        let erased: any Cancellable = token
        erased.cancel()
        #expect(token.isCancelled)
    }

    @Test func cancellation_fromAnyCancellable_cancelsTheSubscriptionOnce() {
        let publisher = DemandRecordingPublisher<Int, Never>()
        let token = Cancellation(publisher.sink { _ in })
        #expect(publisher.requests == [.unlimited])
        token.cancel()
        token.cancel()
        #expect(publisher.cancellationCount == 1)
        #expect(publisher.events.last == .cancelled)
    }

    @Test func anyCancellable_storedInABag_isCancelledWhenTheOwnerGoes() {
        let subject = PassthroughSubject<Int, Never>()
        let received = Counter()
        var bag: CancellationBag? = CancellationBag()
        subject.sink { _ in received.increment() }.store(in: bag!)
        subject.send(1)
        bag = nil  // the owner is released
        subject.send(2)
        #expect(received.value == 1)
    }

    @Test func cancellation_fromAnyCancellable_cancelsWhenReleased_likeAnyCancellable() {
        let publisher = DemandRecordingPublisher<Int, Never>()
        do {
            let token = publisher.sink { _ in }.cancellation
            #expect(!token.isCancelled)
        }
        #expect(publisher.cancellationCount == 1)
    }

    @Test func roundTrip_cancellationToAnyCancellableAndBack() {
        let runs = Counter()
        let token = Cancellation { runs.increment() }
        let back = token.anyCancellable.cancellation
        back.cancel()
        #expect(token.isCancelled)
        #expect(runs.value == 1)
    }
}

#endif
