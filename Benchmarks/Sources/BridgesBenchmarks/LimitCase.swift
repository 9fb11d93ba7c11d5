// The limit: the minimal correct single-consumer AsyncSequence — a lock, a ring, one stored
// continuation — written here so every run measures the distance to it in the same process.
// No cancellation, no policies, no teardown, no diagnostics: what any design must at least pay
// to hand an element from a producer to an awaiting consumer. Printed as `limit=<ns>` on the
// spsc RATIO lines; not a peer (nobody should ship it: a cancelled consumer hangs).

import Synchronization

final class MinimalChannel<Element: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: every mutable field below is read and written only with `mutex` held.
    // The standard library's `Mutex` (a four-byte futex lock on Linux, `os_unfair_lock` on
    // Apple platforms): the cheapest lock a minimal design written today would pick. (Until
    // issue 16's third round this was a `pthread_mutex_t`, ≈ 57 Ir per lock pair, which Bridges'
    // own four-byte lock then undercut.)
    private let mutex = Mutex<Void>(())
    private var ring: UnsafeMutablePointer<Element>
    private var capacity = 16  // a power of two
    private var head = 0
    private var count = 0
    private var finished = false
    private var waiter: UnsafeContinuation<Element?, Never>?

    init() {
        ring = .allocate(capacity: capacity)
    }

    deinit {
        let mask = capacity - 1
        for i in 0..<count { (ring + ((head + i) & mask)).deinitialize(count: 1) }
        ring.deallocate()
    }

    /// Under the lock.
    @inline(__always) private func push(_ element: Element) {
        if count == capacity { grow() }
        (ring + ((head + count) & (capacity - 1))).initialize(to: element)
        count += 1
    }

    /// Under the lock; `count > 0`.
    @inline(__always) private func pop() -> Element {
        let element = (ring + head).move()
        head = (head + 1) & (capacity - 1)
        count -= 1
        return element
    }

    @inline(never) private func grow() {
        let bigger = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        for i in 0..<count { (bigger + i).moveInitialize(from: ring + ((head + i) & (capacity - 1)), count: 1) }
        ring.deallocate()
        ring = bigger
        head = 0
        capacity *= 2
    }

    func yield(_ element: Element) {
        let waiter = mutex.withLock { _ -> UnsafeContinuation<Element?, Never>? in
            if let waiter = self.waiter {
                self.waiter = nil
                return waiter
            }
            push(element)
            return nil
        }
        waiter?.resume(returning: element)
    }

    func finish() {
        let waiter = mutex.withLock { _ -> UnsafeContinuation<Element?, Never>? in
            finished = true
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Buffered: taken synchronously under one lock pair. Empty: one continuation, stored.
    /// (`.some(element)`, `.some(nil)` at the end, `nil` when it must wait.)
    @inline(__always)
    func next(isolation actor: isolated (any Actor)?) async -> Element? {
        let taken = mutex.withLock { _ -> Element?? in
            if count > 0 { return .some(pop()) }
            return finished ? .some(nil) : nil
        }
        if let taken { return taken }
        return await wait(isolation: actor)
    }

    @inline(never)
    private func wait(isolation actor: isolated (any Actor)?) async -> Element? {
        await withUnsafeContinuation(isolation: actor) { continuation in
            let taken = mutex.withLock { _ -> Element?? in
                if count > 0 { return .some(pop()) }
                if finished { return .some(nil) }
                waiter = continuation
                return nil
            }
            if let taken { continuation.resume(returning: taken) }
        }
    }
}

struct MinimalStream<Element: Sendable>: AsyncSequence {
    let channel: MinimalChannel<Element>

    struct AsyncIterator: AsyncIteratorProtocol {
        let channel: MinimalChannel<Element>
        @inline(__always)
        mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            await channel.next(isolation: actor)
        }
        mutating func next() async -> Element? { await channel.next(isolation: nil) }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(channel: channel) }
}

/// spsc.{thread,task}.unbounded through the minimal design.
func limitSPSC(_ producer: ProducerKind, n: Int) async throws -> Sample {
    try await detachedRun {
        let (tally, ns) = await timed { () async -> Tally in
            let channel = MinimalChannel<Int>()
            switch producer {
            case .thread:
                onThread {
                    for i in 0..<n { channel.yield(i) }
                    channel.finish()
                }
            case .task:
                Task.detached {
                    for i in 0..<n { channel.yield(i) }
                    channel.finish()
                }
            }
            var tally = Tally()
            for await x in MinimalStream(channel: channel) { tally.add(x) }
            return tally
        }
        try tally.check("spsc.\(producer).unbounded limit", sent: n, lossless: true)
        return tally.sample(ns: ns, sent: n)
    }
}

/// depth.D through the minimal design: one task fills it to depth D and drains it, as
/// `bridgesDepth` does, so the comparison is exact under callgrind (no thread hand-over).
func limitDepth(_ depth: Int, n: Int) async throws -> Sample {
    try await detachedRun {
        let rounds = n == 0 ? 0 : max(n / depth, 1)
        let (tally, ns) = await timed { () async -> Tally in
            let channel = MinimalChannel<Int>()
            var iterator = MinimalStream(channel: channel).makeAsyncIterator()
            var tally = Tally()
            var value = 0
            for _ in 0..<rounds {
                for _ in 0..<depth {
                    channel.yield(value)
                    value += 1
                }
                for _ in 0..<depth { tally.add(await iterator.next()!) }
            }
            channel.finish()
            return tally
        }
        try tally.check("depth.\(depth) limit", sent: rounds * depth, lossless: true)
        return tally.sample(ns: ns, sent: rounds * depth)
    }
}
