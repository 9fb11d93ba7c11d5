// An untyped multi-statement onLateResult: written before the body: the fallback's message.
import Bridges

func untypedLate_value() async throws {
    let value = try await withCallback(onLateResult: { late in
        print("late", late.bitWidth)
        print("after the caller left")
    }) { done in
        let request = locate(completion: done)
        return Cancellation { request.cancel() }
    }
    _ = value
}
