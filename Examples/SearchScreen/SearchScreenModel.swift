/// A movie in the catalog the search screen filters.
public struct Movie: Sendable, Equatable, CustomStringConvertible {
    public var id: Int
    public var title: String
    public init(_ id: Int, _ title: String) { self.id = id; self.title = title }
    public var description: String { title }
}

/// What the search screen's view model promises, whichever way it is built:
/// - the first query (empty: show everything) is applied at once;
/// - later queries wait until typing has paused for 300 ms (debounce), and a query equal to the
///   previous one is not searched again (removeDuplicates);
/// - results follow both the query and the catalog (combineLatest): a catalog update re-filters
///   with the current query;
/// - every result list shown is recorded in `rendered`, in order (the "view").
public protocol SearchScreenModel: AnyObject {
    func setSearchText(_ text: String)
    var rendered: [[Movie]] { get }
}

/// The filtering both implementations share: case-insensitive substring match.
func filter(_ catalog: [Movie], by query: String) -> [Movie] {
    query.isEmpty ? catalog : catalog.filter { $0.title.localizedCaseInsensitiveContains(query) }
}

let searchDebounce = 300  // milliseconds
