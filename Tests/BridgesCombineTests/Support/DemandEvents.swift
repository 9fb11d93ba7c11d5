import Bridges
import BridgesTesting
import Testing

@testable import BridgesCombine

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine

/// The largest demand a publisher ever had outstanding (requested and not yet sent), from its log.
func maxOutstanding(_ events: [DemandRecordingPublisher<Int, Never>.Event]) -> Subscribers.Demand {
    var outstanding = Subscribers.Demand.none
    var maximum = Subscribers.Demand.none
    for event in events {
        switch event {
        case .requested(let demand): outstanding += demand
        case .sent: outstanding -= 1
        default: break
        }
        maximum = max(maximum, outstanding)
    }
    return maximum
}

#endif
