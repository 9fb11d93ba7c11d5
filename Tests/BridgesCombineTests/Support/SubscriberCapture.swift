import Bridges

@testable import BridgesCombine

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine

/// Keeps a weak reference to whatever subscriber attaches, so a test can check that the bridge's
/// subscriber was released.
final class WeakSubscriberBox: Sendable {
    private struct Reference { weak var object: AnyObject? }
    private let reference = LockedState(Reference())
    func set(_ object: AnyObject) { reference.withLock { $0.object = object } }
    var object: AnyObject? { reference.withLock { $0.object } }
}

struct SubscriberCapturingPublisher<Upstream: Publisher>: Publisher {
    typealias Output = Upstream.Output
    typealias Failure = Upstream.Failure
    let upstream: Upstream
    let box: WeakSubscriberBox

    func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
        box.set(subscriber as AnyObject)
        upstream.receive(subscriber: subscriber)
    }
}

#endif
