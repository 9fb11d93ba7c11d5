// A `while` loop before the legacy call, (T?, Error?) shape.
import Bridges

func retried() async throws -> Int {
    try await withCallback { (done: @escaping @Sendable (Int?, (any Error)?) -> Void) in
        var attempts = 0
        while attempts < 3 { attempts += 1 }
        let request = fetch(attempts, completion: done)
        Cancellation { request.cancel() }
    }
}
