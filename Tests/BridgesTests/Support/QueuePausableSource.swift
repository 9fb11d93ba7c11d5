import Bridges
import Dispatch

/// A source that produces 0..<count on its own serial queue while running, and pauses/resumes
/// through a `DemandGate`: the shape of a socket or a file handle. `send` hands one element on
/// (false: the consumer is gone), `finish` ends the stream; a `Sink` or a `Broadcast` behind them.
// `next`, `paused`, `finished` are touched on `queue` only; `gate` is set before `resume()`
final class QueuePausableSource: @unchecked Sendable {
    private let queue = DispatchQueue(label: "QueuePausableSource")
    private let count: Int
    private let send: @Sendable (Int) -> Bool
    private let finish: @Sendable () -> Void
    private var next = 0
    private var paused = false
    private var finished = false
    var gate: DemandGate?

    init(count: Int, send: @escaping @Sendable (Int) -> Bool, finish: @escaping @Sendable () -> Void) {
        self.count = count
        self.send = send
        self.finish = finish
    }

    convenience init(count: Int, sink: CallbackStream<Int, Never>.Sink) {
        self.init(
            count: count, send: { if case .terminated = sink.yield($0) { false } else { true } },
            finish: { sink.finish() })
    }

    convenience init(count: Int, events: Broadcast<Int>) {
        self.init(
            count: count, send: { if case .terminated = events.yield($0) { false } else { true } },
            finish: { events.finish() })
    }

    func pause() { queue.async { self.paused = true } }

    func resume() {
        queue.async {
            self.paused = false
            self.produce()
        }
    }

    private func produce() {
        while !paused && next < count {
            let value = next
            next += 1
            // Spend, then send (see DemandGate): the gate pauses us (asynchronously, on this
            // queue) when credit runs out; stop looping then so the pause lands before we
            // produce again.
            let room = gate?.spend()
            if !send(value) { return }
            if room == false { break }
        }
        if next == count && !finished {
            finished = true
            finish()
        }
    }
}
