import Bridges

/// Where a Combine bridge was created, and the diagnostics handler in effect there.
///
/// Like the `Bridges` module's own (internal) call-site type: captures the task-local handler
/// at creation and reports to it later from any thread, which is what keeps a test's
/// `Diagnostics.withHandler` scoped to the bridges it created. Without one, reports go to the
/// default handler in effect when they are made (creating a bridge never reads it).
struct Reporter: Sendable {
    let fileID: String
    let line: UInt
    /// nil: the default handler at report time.
    private let handler: Diagnostics.Handler?

    init(fileID: String, line: UInt) {
        self.fileID = fileID
        self.line = line
        self.handler = Diagnostics.taskLocalHandler
    }

    /// Reports `kind` once per `bridge` (the subscriber or subscription misused); later
    /// occurrences only count (``BridgeDiagnostic/occurrences``).
    func report(_ kind: BridgeDiagnostic.Kind, _ message: String, bridge: AnyObject) {
        Diagnostics.deliver(kind, message, fileID: fileID, line: line, bridge: bridge, to: handler)
    }
}
