// A `guard` before the legacy call: the builder cannot take it, and the trailing token would be dropped.
import Bridges

func guarded(_ id: Int?) async throws -> Int {
    try await withCallback { done in
        guard let id else { throw LegacyError() }
        let request = load(id, completion: done)
        Cancellation { request.cancel() }
    }
}
