import Bridges
import Dispatch
import Testing

@Suite("CallbackStream: isolation", .timeLimit(.minutes(3)))
struct CallbackStreamIsolationTests {
    @MainActor
    @Test func mainActorConsumer_drainsBufferedStream() async {
        let probe = StreamProbe()
        let stream = CallbackStream<Int, Never>.probed(probe) { sink in
            for value in 0..<10_000 { sink.yield(value) }
            sink.finish()
        }
        var sum = 0
        var count = 0
        for await value in stream {
            MainActor.assertIsolated()
            sum += value
            count += 1
        }
        #expect(count == 10_000)
        #expect(sum == (0..<10_000).reduce(0, +))
        await probe.proxyReleased.wait()
    }

    @MainActor
    @Test func mainActorConsumer_takesBufferedElementsWithoutLeavingTheMainActor() async {
        // Another main-actor job is enqueued before the drain. If any next() suspended or hopped
        // off the main actor, that job would run in between and flip the flag.
        final class Flag { var value = false }
        let flag = Flag()
        let stream = CallbackStream<Int, Never> { sink in
            for value in 0..<5_000 { sink.yield(value) }
            sink.finish()
            return Cancellation()
        }
        let interloper = Task { @MainActor in flag.value = true }
        var count = 0
        for await _ in stream {
            if flag.value { break }
            count += 1
        }
        #expect(count == 5_000, "the drain never gave up the main actor")
        #expect(!flag.value)
        await interloper.value
        #expect(flag.value)
    }

    actor Collector {
        var values: [Int] = []
        func drain(_ stream: CallbackStream<Int, Never>) async {
            for await value in stream {
                self.assertIsolated()
                values.append(value)
            }
        }
    }

    @Test func actorConsumer_withLiveProducer_receivesAll() async {
        let probe = StreamProbe()
        let stream = CallbackStream<Int, Never>.probed(probe, buffering: .suspending(16)) { sink in
            let producer = sink
            Task {
                for value in 0..<5_000 { _ = await producer.send(value) }
                producer.finish()
            }
        }
        let collector = Collector()
        await collector.drain(stream)
        #expect(await collector.values == Array(0..<5_000))
        await probe.proxyReleased.wait()
    }
}
