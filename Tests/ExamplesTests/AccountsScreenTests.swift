#if canImport(Combine) || OpenCombine
@testable import AccountsScreen
import Bridges
import ExampleTesting
import Testing

@Suite("Example: AccountsScreen", .timeLimit(.minutes(3)))
struct AccountsScreenTests {
    /// The presenter test of a bank's accounts screen (Examples/AccountsScreen): the real facade over fake backends, virtual
    /// time for the timeout, `runUntilIdle()` for the fire-and-forget deletion.
    @Test func presenterRendersFacadeState_firesAndForgetsCommands_andIsReleasedWithItsSubscription() async throws {
        recordExampleTestingFailuresAsIssues()
        let diagnostics = LockedState<[BridgeDiagnostic]>([])
        try await Diagnostics.withHandler({ report in diagnostics.withLock { $0.append(report) } }) {
            try await withLeakTracking { tracker in
                let backend = FakeAccountsBackend()
                let clock = TestClock()
                let facade = BankAccountsFacade(backend: backend, clock: clock)
                let view = RecordingAccountsView()
                try await withSerialTasks {
                    var presenter: AccountsPresenter? = AccountsPresenter(facade: facade, view: view)
                    tracker.track(presenter!)
                    presenter?.viewDidLoad()
                    await runUntilIdle()
                    #expect(view.shown == [[]])
                    try await backend.fetches.nextInvocation().complete(with: [checking, savings])
                    await runUntilIdle()
                    #expect(view.shown == [[], [checking, savings]])

                    presenter?.didSwipeToDelete(savings.id)
                    await runUntilIdle()
                    let deletion = try await backend.deletes.nextInvocation()
                    #expect(deletion.request == savings.id)
                    #expect(view.shown.count == 2)  // nothing until the backend answers
                    deletion.complete(with: ())
                    await runUntilIdle()
                    #expect(view.shown.last == [checking])

                    presenter?.reload()
                    await runUntilIdle()
                    let stuck = try await backend.fetches.nextInvocation()
                    await clock.advance(by: .seconds(9))
                    #expect(view.errors.isEmpty)  // not before 10 s
                    await clock.advance(by: .seconds(1))
                    await runUntilIdle()
                    #expect(view.errors.count == 1)
                    #expect(stuck.isCancelled)

                    presenter = nil
                    await runUntilIdle()
                    #expect(facade.observerCount == 0)
                    await clock.expectNoPendingSleepers()
                }
            }
        }
        #expect(diagnostics.withLock { $0 }.isEmpty)
    }

    @Test func exampleRun() async throws {
        let report = try await runAccountsScreen(log: { _ in })
        #expect(report.shownAfterDelete == [[], [checking, savings], [checking]])
        #expect(report.presenterReleased)
        #expect(report.observersAfterRelease == 0)
        #expect(!report.leakyPresenterReleased)
        #expect(report.observersWhileLeaking == 1)
        #expect(report.leakyReleasedAfterStop)
    }
}
#endif
