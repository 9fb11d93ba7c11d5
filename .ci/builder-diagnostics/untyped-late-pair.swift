// An untyped multi-statement onLateResult: written before the body: the fallback's message.
import Bridges

func untypedLate_pair() async throws {
    let value = try await withCallback(onLateResult: { late in
        print("late", late)
        print("after the caller left")
    }) { done in
        let request = fetch(1, completion: done)
        return Cancellation { request.cancel() }
    }
    _ = value
}
