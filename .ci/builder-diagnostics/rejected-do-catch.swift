// `do`/`catch` before the legacy call, (Error?) shape.
import Bridges

func validatedSave() async throws {
    try await withCallback { (done: @escaping @Sendable ((any Error)?) -> Void) in
        do { try validate(1) } catch { print(error) }
        let request = save(completion: done)
        Cancellation { request.cancel() }
    }
}
