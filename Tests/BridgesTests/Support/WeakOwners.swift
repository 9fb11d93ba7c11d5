import TestSupport
import Testing

@testable import Bridges

/// A view model as users write them: `@MainActor`, its own bag, state set from a stream.
@MainActor
final class ItemsViewModel {
    var items: [Int] = []
    var updatesOnMainActor: [Bool] = []
    let bag = CancellationBag()
    private let updates: Collected<[Int]>
    private let deinitGate: Gate

    init(updates: Collected<[Int]>, deinitGate: Gate) {
        self.updates = updates
        self.deinitGate = deinitGate
    }

    /// `probe` is released when the loop's Task has ended (it lives in the handler's captures).
    func bind<S: AsyncSequence & Sendable>(to items: S, probe: DeinitSignal) where S.Element == [Int] {
        // The shape README promises, inside a @MainActor type, without warnings.
        items.forEach(weak: self, in: bag) { [probe] owner, items in
            _ = probe
            owner.items = items
            owner.updatesOnMainActor.append(isOnMainActor())
            owner.updates.append(items)
        }
    }

    deinit { deinitGate.open() }
}

/// A plain (non-actor) owner.
final class PlainOwner: Sendable {
    let bag = CancellationBag()
    private let deinitGate: Gate
    init(deinitGate: Gate) { self.deinitGate = deinitGate }
    deinit { deinitGate.open() }
}

/// An `actor` owner: its own isolation is the caller's, and a Task running there would hold it.
actor ActorOwner {
    private(set) var values: [Int] = []
    let bag = CancellationBag()
    private let deinitGate: Gate

    init(deinitGate: Gate) { self.deinitGate = deinitGate }

    func listen(to stream: AsyncStream<Int>, updates: Collected<Int>, probe: DeinitSignal) {
        stream.forEach(weak: self, in: bag) { [probe] owner, value in
            _ = probe
            await owner.append(value)
            updates.append(value)
        }
    }

    func load(work: Gate, applied: Collected<Int>, probe: DeinitSignal) {
        runTask(weak: self, in: bag) {
            await work.wait()
            return 5
        } then: { [probe] owner, result in
            _ = probe
            await owner.append((try? result.get()) ?? -1)
            applied.append((try? result.get()) ?? -1)
        }
    }

    func append(_ value: Int) { values.append(value) }

    deinit { deinitGate.open() }
}

/// An owner that does what the issue warns about: `Task { for await x in seq { self.x = x } }`.
final class NaiveOwner: Sendable {
    private let values = Collected<Int>()
    private let deinitGate: Gate
    init<S: AsyncSequence & Sendable>(listeningTo sequence: S, deinitGate: Gate) where S.Element == Int {
        self.deinitGate = deinitGate
        Task { for try await value in sequence { self.values.append(value) } }
    }
    deinit { deinitGate.open() }
}
