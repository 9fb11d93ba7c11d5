import Bridges
import BridgesTesting
import TestSupport

/// A search screen's presenter: debounces the text by 300 ms (Bridges' `debounce`) and queries the
/// legacy API for each settled query. Its tests drive it with `TestClock`.
@available(BridgesTypedSequence, *)
final class SearchPresenter<C: Clock>: Sendable where C.Duration == Duration {
    let searchText = ProcessingChannel<String>()
    let results = Collected<[String]>()
    private let api: FakeCompletionAPI<String, [String]>
    private let clock: C

    init(api: FakeCompletionAPI<String, [String]>, clock: C) {
        self.api = api
        self.clock = clock
    }

    func start() -> Task<Void, any Error> {
        let queries = searchText.debounce(for: .milliseconds(300), clock: clock, buffering: .unbounded)
        return Task { [api, results] in
            for await query in queries {
                let found = try await withCallback { done in api.call(query, completion: done) }
                results.append(found)
            }
        }
    }
}
