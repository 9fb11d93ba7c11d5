import Bridges
import Foundation

@available(BridgesTypedSequence, *)  // debounce, collectLatest, AsyncSequence.Failure (kept outside the snippet)
// snippet:begin searchScreen.after
/// The async version: the text field feeds an `AsyncStream`; the same chain of operators
/// (Bridges' `debounce` on a `Clock`, small example ones for the rest); the results are collected
/// on behalf of the model with `collectLatest(weak:in:)`: a newer query cancels the work still
/// running for the previous one, the model is never kept alive by its own pipeline, and its
/// death tears the pipeline down.
public final class AsyncSearchModel: SearchScreenModel, Sendable {
    private let results = ExampleLockedValue<[[Movie]]>([])
    private let searchText = AsyncStream.makeStream(of: String.self)
    private let bag = CancellationBag()

    public init<Catalog: AsyncSequence & Sendable, C: Clock<Duration>>(catalog: Catalog, clock: C)
        where Catalog.Element == [Movie], Catalog.Failure == Never
    {
        let query = searchText.stream
            .debounce(for: .milliseconds(searchDebounce), clock: clock, buffering: .unbounded)
            .prepend("")                                  // the empty query shows everything at once
            .removeDuplicates()
        combineLatest(query, catalog)
            .collectLatest(weak: self, in: bag) { owner, pair in
                owner.results.update { $0.append(filter(pair.1, by: pair.0)) }
            }
    }

    public func setSearchText(_ text: String) { searchText.continuation.yield(text) }
    public var rendered: [[Movie]] { results.update { $0 } }
}
// snippet:end searchScreen.after
