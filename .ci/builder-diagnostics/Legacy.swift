// Shared by the files in this folder: a legacy API in the shapes the builder's callers bridge.
// Type-checked together with each of them by .ci/check-builder-diagnostics.sh.
import Bridges

final class Request: Sendable { func cancel() {} }
struct LegacyError: Error {}
enum Mode { case fresh, cached }

func load(_ id: Int, completion: @escaping @Sendable (Result<Int, any Error>) -> Void) -> Request { Request() }
func loadTyped(_ id: Int, completion: @escaping @Sendable (Result<Int, LegacyError>) -> Void) -> Request { Request() }
func fetch(_ id: Int, completion: @escaping @Sendable (Int?, (any Error)?) -> Void) -> Request { Request() }
func locate(completion: @escaping @Sendable (Int) -> Void) -> Request { Request() }
func save(completion: @escaping @Sendable ((any Error)?) -> Void) -> Request { Request() }
func animate(completion: @escaping @Sendable () -> Void) -> Request { Request() }
func start(completion: @escaping @Sendable (Result<Int, any Error>) -> Void) -> Cancellation { Cancellation {} }
func validate(_ id: Int) throws {}
