// `guard` with a () -> Void handler.
import Bridges

func animated(_ enabled: Bool) async throws {
    try await withCallback { (done: @escaping @Sendable () -> Void) in
        guard enabled else { throw LegacyError() }
        let request = animate(completion: done)
        Cancellation { request.cancel() }
    }
}
