// The one place that names the engine's policy type, so the cases read the same whatever it is called.
import Bridges

extension SPSCPolicy {
    var bridges: ShimPolicy {
        switch self {
        case .unbounded: .unbounded
        case .latest: .latest
        case .drop: .drop
        case .dropOldest16: .dropOldest(16)
        }
    }
}
typealias StreamPolicy = ShimPolicy
