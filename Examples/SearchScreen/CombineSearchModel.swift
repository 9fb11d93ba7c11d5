#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif
import Foundation

#if canImport(Combine) || OpenCombine
// snippet:begin searchScreen.before
/// The Combine version: a subject for the text field, an operator chain, a `sink` stored in
/// `Set<AnyCancellable>`. Time comes from the scheduler (`DispatchQueue.main` in the app, a
/// virtual-time scheduler in tests).
public final class CombineSearchModel<S: Scheduler>: SearchScreenModel {
    public private(set) var rendered: [[Movie]] = []
    private let searchText = PassthroughSubject<String, Never>()
    private var cancellables = Set<AnyCancellable>()

    public init(catalog: AnyPublisher<[Movie], Never>, scheduler: S) {
        let query = searchText
            .debounce(for: .milliseconds(searchDebounce), scheduler: scheduler)
            .prepend("")                                  // the empty query shows everything at once
            .removeDuplicates()
        latest(query, catalog)
            .map { query, catalog in filter(catalog, by: query) }
            .sink { [weak self] results in self?.rendered.append(results) }
            .store(in: &cancellables)
    }

    public func setSearchText(_ text: String) { searchText.send(text) }
}
// snippet:end searchScreen.before

/// `a.combineLatest(b)`. OpenCombine 0.14.0 has neither `combineLatest` nor `merge`, so on Linux
/// the same operator is built from `flatMap` and `scan`.
func latest<A: Publisher, B: Publisher>(_ a: A, _ b: B) -> AnyPublisher<(A.Output, B.Output), Never>
    where A.Failure == Never, B.Failure == Never
{
    #if canImport(Combine)
    a.combineLatest(b).eraseToAnyPublisher()
    #else
    let tagged = [a.map { (A.Output?.some($0), B.Output?.none) }.eraseToAnyPublisher(), b.map { (A.Output?.none, B.Output?.some($0)) }.eraseToAnyPublisher()]
    return Publishers.Sequence<[AnyPublisher<(A.Output?, B.Output?), Never>], Never>(sequence: tagged)
        .flatMap { $0 }
        .scan((A.Output?.none, B.Output?.none)) { latest, next in (next.0 ?? latest.0, next.1 ?? latest.1) }
        .compactMap { latest in latest.0.flatMap { a in latest.1.map { (a, $0) } } }
        .eraseToAnyPublisher()
    #endif
}
#endif
