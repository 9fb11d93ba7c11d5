// withTypedCallback, an untyped multi-statement onLateResult: written before the body.
import Bridges

func untypedLate_typed() async throws {
    let value = try await withTypedCallback(onLateResult: { late in
        if case .success(let value) = late { print("late", value) }
        print("after the caller left")
    }) { done in
        let request = loadTyped(1, completion: done)
        return Cancellation { request.cancel() }
    }
    _ = value
}
