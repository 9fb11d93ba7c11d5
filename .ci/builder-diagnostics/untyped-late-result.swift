// An untyped multi-statement onLateResult: written before the body: the fallback's message.
import Bridges

func untypedLate_result() async throws {
    let value = try await withCallback(onLateResult: { late in
        if case .success(let value) = late { print("late", value) }
        print("after the caller left")
    }) { done in
        let request = load(1, completion: done)
        return Cancellation { request.cancel() }
    }
    _ = value
}
