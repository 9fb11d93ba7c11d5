// `guard` with a (T) -> Void handler.
import Bridges

func located(_ enabled: Bool) async throws -> Int {
    try await withCallback { (done: @escaping @Sendable (Int) -> Void) in
        guard enabled else { throw LegacyError() }
        let request = locate(completion: done)
        Cancellation { request.cancel() }
    }
}
