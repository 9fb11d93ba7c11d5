import Bridges
import TestSupport
import Testing

@testable import BridgesCombine

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if canImport(Combine) || OpenCombine

/// A LoginViewModel's `combineLatest` pipeline, consumed with `sink` and
/// migrated to `for await` over `stream(buffering: .unbounded)`, gives the same outputs.
/// (On Linux `combineLatest3` is built from OpenCombine's operators: see Support/CombineLatest.swift.)
@Suite(.timeLimit(.minutes(3))) struct CombineLatestMigrationTests {
    static let script: [(field: Int, text: String)] = [
        (0, "a"), (1, "secret"), (2, "secret"), (1, "secret-pw"), (2, "secret-p"),
        (2, "secret-pw"), (0, ""), (0, "ann"), (1, "x"), (2, "x"),
    ]

    static func canLogin(_ user: String, _ password: String, _ confirmation: String) -> Bool {
        !user.isEmpty && password.count >= 8 && password == confirmation
    }

    @Test func currentValueSubjects_sinkAndForAwait_giveTheSameOutputs() async {
        func makeFields() -> [CurrentValueSubject<String, Never>] { (0..<3).map { _ in CurrentValueSubject("") } }
        func pipeline(_ f: [CurrentValueSubject<String, Never>]) -> AnyPublisher<Bool, Never> {
            combineLatest3(f[0], f[1], f[2]).map(Self.canLogin).eraseToAnyPublisher()
        }

        // Before: Combine, with a sink.
        let combineFields = makeFields()
        var sinkOutputs: [Bool] = []
        let cancellable = pipeline(combineFields).sink { sinkOutputs.append($0) }
        for step in Self.script { combineFields[step.field].send(step.text) }
        cancellable.cancel()

        // After: for await.
        let fields = makeFields()
        // Send only after the first combined output: it proves all three subjects have demand
        // (waiting for the outer request raced with its propagation upstream).
        let firstOutput = Gate()
        let stream = pipeline(fields).stream(buffering: .unbounded)
        let consumer = Task {
            var outputs: [Bool] = []
            for await canLogin in stream {
                outputs.append(canLogin)
                if outputs.count == 1 { firstOutput.open() }
            }
            return outputs
        }
        await firstOutput.wait()
        for step in Self.script { fields[step.field].send(step.text) }
        for field in fields { field.send(completion: .finished) }
        let forAwaitOutputs = await consumer.value

        #expect(forAwaitOutputs == sinkOutputs)
        #expect(sinkOutputs.count == Self.script.count + 1)  // initial combination + one per send
        #expect(sinkOutputs.filter { $0 } == [true, true])
    }

    final class LoginForm {
        @Published var userName = ""
        @Published var password = ""
        @Published var confirmation = ""

        var canLogin: AnyPublisher<Bool, Never> {
            combineLatest3($userName, $password, $confirmation).map(CombineLatestMigrationTests.canLogin)
                .eraseToAnyPublisher()
        }

        func apply(_ step: (field: Int, text: String)) {
            switch step.field {
            case 0: userName = step.text
            case 1: password = step.text
            default: confirmation = step.text
            }
        }
    }

    @Test func published_sinkAndForAwait_giveTheSameOutputs() async {
        let combineForm = LoginForm()
        var sinkOutputs: [Bool] = []
        // snippet:begin publishedCombineLatest.before
        let cancellable = combineForm.canLogin.sink { sinkOutputs.append($0) }
        // snippet:end publishedCombineLatest.before
        for step in Self.script { combineForm.apply(step) }
        cancellable.cancel()

        let form = LoginForm()
        // The script may start only once all three @Published sources have demand, or values
        // set before that conflate. The first combined output is the proof: combineLatest emits
        // it only after each source delivered its initial value. (Waiting for the outer request
        // instead raced with its propagation upstream and hung 1 run in 2.)
        let firstOutput = Gate()
        let cancelled = Gate()
        let stream = form.canLogin
            .handleEvents(receiveCancel: { cancelled.open() })
            .stream(buffering: .unbounded)
        let expected = sinkOutputs.count
        let consumer = Task {
            var outputs: [Bool] = []
            // snippet:begin publishedCombineLatest.after
            for await canLogin in stream {
                outputs.append(canLogin)
                if outputs.count == 1 { firstOutput.open() }
                if outputs.count == expected { break }  // @Published never completes
            }
            // snippet:end publishedCombineLatest.after
            return outputs
        }
        await firstOutput.wait()
        for step in Self.script { form.apply(step) }
        #expect(await consumer.value == sinkOutputs)
        await cancelled.wait()  // breaking out cancelled the @Published subscription
    }
}

#endif
