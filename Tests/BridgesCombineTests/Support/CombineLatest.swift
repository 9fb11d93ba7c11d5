#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine)
/// Combine's own `CombineLatest3`.
func combineLatest3<A: Publisher, B: Publisher, C: Publisher>(
    _ a: A, _ b: B, _ c: C
) -> AnyPublisher<(A.Output, A.Output, A.Output), Never>
where A.Failure == Never, B.Failure == Never, C.Failure == Never, B.Output == A.Output, C.Output == A.Output {
    Publishers.CombineLatest3(a, b, c).eraseToAnyPublisher()
}
#elseif OpenCombine
/// OpenCombine 0.14.0 has no `combineLatest` (nor `merge`): the same operator built from the ones
/// it has. FlatMap over the three merges them; `scan` keeps the latest of each; nothing is sent
/// until all three have a value; it finishes when all three have finished.
func combineLatest3<A: Publisher, B: Publisher, C: Publisher>(
    _ a: A, _ b: B, _ c: C
) -> AnyPublisher<(A.Output, A.Output, A.Output), Never>
where A.Failure == Never, B.Failure == Never, C.Failure == Never, B.Output == A.Output, C.Output == A.Output {
    let tagged: [AnyPublisher<(Int, A.Output), Never>] = [
        a.map { (0, $0) }.eraseToAnyPublisher(),
        b.map { (1, $0) }.eraseToAnyPublisher(),
        c.map { (2, $0) }.eraseToAnyPublisher(),
    ]
    return Publishers.Sequence<[AnyPublisher<(Int, A.Output), Never>], Never>(sequence: tagged)
        .flatMap { $0 }
        .scan([A.Output?](repeating: nil, count: 3)) { latest, tagged in
            var latest = latest
            latest[tagged.0] = tagged.1
            return latest
        }
        .compactMap { latest in
            guard let a = latest[0], let b = latest[1], let c = latest[2] else { return nil }
            return (a, b, c)
        }
        .eraseToAnyPublisher()
}
#endif
