import Dispatch
import TestSupport
import Testing

@testable import Bridges

/// Outcome of one completion call, flattened for exact assertions.
enum CompletionOutcome: Equatable, Sendable {
    case value(Int)
    case failure(Int)
    case cancelled
    case otherError(String)

    init(_ result: Result<Int, any Error>) {
        switch result {
        case .success(let value): self = .value(value)
        case .failure(let error as TestError): self = .failure(error.code)
        case .failure(is CancellationError): self = .cancelled
        case .failure(let error): self = .otherError("\(error)")
        }
    }
}

/// Some work that the optimiser cannot remove, proportional to `units`.
@inline(never)
func raceJitter(_ units: Int) -> Int {
    var accumulator = units
    for step in 0..<(units * 100) { accumulator = accumulator &* 31 &+ step }
    return accumulator
}
