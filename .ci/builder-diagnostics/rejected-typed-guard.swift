// `guard` in withTypedCallback.
import Bridges

func typed(_ id: Int?) async -> Int? {
    try? await withTypedCallback { (done: @escaping @Sendable (Result<Int, LegacyError>) -> Void) in
        guard let id else { done(.failure(LegacyError())); return }
        let request = loadTyped(id, completion: done)
        Cancellation { request.cancel() }
    }
}
