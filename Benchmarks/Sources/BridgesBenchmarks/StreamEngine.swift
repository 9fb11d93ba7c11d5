// The one place that maps the case-1 policy names onto the engine's `BufferingPolicy`.
import Bridges

extension SPSCPolicy {
    var bridges: BufferingPolicy {
        switch self {
        case .unbounded: .unbounded
        case .latest: .latest
        case .drop: .drop
        case .dropOldest16: .dropOldest(16)
        }
    }
}
typealias StreamPolicy = BufferingPolicy
