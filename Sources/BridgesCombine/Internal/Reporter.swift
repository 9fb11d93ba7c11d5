import Bridges

/// Where a Combine bridge was created, and the diagnostics handler in effect there.
///
/// Like the `Bridges` module's own (internal) call-site type: captures the task-local handler
/// at creation and reports to it later from any thread, which is what keeps a test's
/// `Diagnostics.withHandler` scoped to the bridges it created. Without one, reports go to the
/// default handler in effect when they are made (creating a bridge never reads it).
@usableFromInline
struct Reporter: Sendable {
    // Laid out in 36 bytes, not 40 (the line last, in 32 bits): a field that follows a
    // `Reporter` in an object (a flag) then fits in its padding.
    let fileID: String
    /// nil: the default handler at report time.
    private let handler: Diagnostics.Handler?
    private let line32: UInt32

    var line: UInt { UInt(line32) }

    @usableFromInline
    init(fileID: String, line: UInt) {
        self.fileID = fileID
        self.handler = Diagnostics.taskLocalHandler
        self.line32 = UInt32(clamping: line)
    }

    /// Reports `kind` once per `bridge` (the subscriber or subscription misused); later
    /// occurrences only count (``BridgeDiagnostic/occurrences``).
    func report(_ kind: BridgeDiagnostic.Kind, _ message: String, bridge: AnyObject) {
        Diagnostics.dispatch(kind, message, fileID: fileID, line: line, bridge: bridge, to: handler)
    }
}
