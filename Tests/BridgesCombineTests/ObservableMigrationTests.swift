import Bridges
import Testing

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif
#if canImport(Observation)
import Observation
#endif

#if (canImport(Combine) || OpenCombine) && canImport(Observation)

/// MIGRATION.md "@Published → @Observable": a presenter mirroring a model's `name` into its
/// `title`, written with `@Published` + `sink` and with `@Observable` + `observations(of:)`.
enum PublishedBefore {
    // snippet:begin publishedToObservable.before
    final class ProfileModel: ObservableObject {
        @Published var name = ""
    }

    final class TitlePresenter {
        private(set) var title = ""
        private var cancellables = Set<AnyCancellable>()

        init(model: ProfileModel) {
            model.$name
                .sink { [weak self] name in self?.title = name }
                .store(in: &cancellables)
        }
    }
    // snippet:end publishedToObservable.before
}

@available(BridgesObservation, *)
enum ObservableAfter {
    // snippet:begin publishedToObservable.after
    @MainActor @Observable final class ProfileModel {
        var name = ""
    }

    @MainActor @Observable final class TitlePresenter {
        private(set) var title = ""
        private let bag = CancellationBag()

        init(model: ProfileModel) {
            observations(of: model) { $0.name }
                .forEach(weak: self, in: bag) { owner, name in owner.title = name }
        }
    }
    // snippet:end publishedToObservable.after
}

@Suite(.timeLimit(.minutes(3))) struct ObservableMigrationTests {
    @available(BridgesObservation, *)
    @Test func published_sink_titleFollowsTheName() {
        weak var releasedModel: PublishedBefore.ProfileModel?
        weak var releasedPresenter: PublishedBefore.TitlePresenter?
        do {
            let model = PublishedBefore.ProfileModel()
            let presenter = PublishedBefore.TitlePresenter(model: model)
            (releasedModel, releasedPresenter) = (model, presenter)
            model.name = "Ann"
            #expect(presenter.title == "Ann")
            model.name = "Ann Lee"
            #expect(presenter.title == "Ann Lee")
        }
        #expect(releasedModel == nil && releasedPresenter == nil)
    }

    /// The same script after the migration. The test waits for each title through another
    /// observation (of the presenter), so no time passes and nothing is polled.
    @available(BridgesObservation, *)
    @Test @MainActor func observable_observations_titleFollowsTheName() async {
        weak var releasedModel: ObservableAfter.ProfileModel?
        weak var releasedPresenter: ObservableAfter.TitlePresenter?
        do {
            let model = ObservableAfter.ProfileModel()
            let presenter = ObservableAfter.TitlePresenter(model: model)
            (releasedModel, releasedPresenter) = (model, presenter)
            var titles = observations(of: presenter, buffering: .unbounded) { $0.title }.makeAsyncIterator()
            var title = await titles.next()
            #expect(title == "")
            model.name = "Ann"
            repeat { title = await titles.next() } while title == ""  // the presenter may also set "" again first
            #expect(title == "Ann")
            model.name = "Ann"  // a transaction that sets the same value
            model.name = "Ann Lee"  // …and another change in it: one new title
            repeat { title = await titles.next() } while title == "Ann"
            #expect(title == "Ann Lee")
        }
        #expect(releasedModel == nil && releasedPresenter == nil)
    }
}
#endif
