// The onLateResult: forms that compile: typed before the body, untyped after it (every shape,
// withTypedCallback too), single-expression before it, and an (Error?) handler's untyped one
// (which binds the (Error?) shape, not (T) with T == Error?).
import Bridges

func lateTypedBefore() async throws -> Int {
    try await withCallback(onLateResult: { (late: Result<Int, any Error>) in
        print("late", late)
        print("after the caller left")
    }) { done in
        let request = load(1, completion: done)
        return Cancellation { request.cancel() }
    }
}

func lateAfter() async throws -> Int {
    let a = try await withCallback { done in
        let request = load(1, completion: done)
        return Cancellation { request.cancel() }
    } onLateResult: { late in
        if case .success(let value) = late { print("late", value) }
        print("after the caller left")
    }
    let b = try await withCallback { done in
        let request = fetch(1, completion: done)
        return Cancellation { request.cancel() }
    } onLateResult: { late in
        if case .success(let value) = late { print("late", value) }
        print("after the caller left")
    }
    let c = try await withTypedCallback { done in
        let request = loadTyped(1, completion: done)
        return Cancellation { request.cancel() }
    } onLateResult: { late in
        if case .success(let value) = late { print("late", value) }
        print("after the caller left")
    }
    return a + b + c
}

func lateSingleExpressionBefore() async throws -> Int {
    try await withCallback(onLateResult: { print("late", $0) }) { done in
        let request = fetch(1, completion: done)
        return Cancellation { request.cancel() }
    }
}

func lateErrorShapeBefore() async throws {
    try await withCallback(onLateResult: { late in
        print("late", late as Any)
        print("after the caller left")
    }) { done in
        let request = save(completion: done)
        return Cancellation { request.cancel() }
    }
}
