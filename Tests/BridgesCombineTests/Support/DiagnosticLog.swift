import Bridges

/// Collects diagnostics reported while a test runs.
final class DiagnosticLog: Sendable {
    private let entries = LockedState<[BridgeDiagnostic]>([])
    var handler: Diagnostics.Handler { { [entries] d in entries.withLock { $0.append(d) } } }
    var kinds: [BridgeDiagnostic.Kind] { entries.withLock { $0.map(\.kind) } }
    var all: [BridgeDiagnostic] { entries.withLock { $0 } }
}
