import Bridges

/// Where a Combine bridge was created, and the diagnostics handler in effect there.
///
/// The `Bridges` module's own call-site type is internal, so this captures the public
/// ``Diagnostics/current`` handler at creation and reports to it later from any thread, which
/// is what keeps a test's `Diagnostics.withHandler` scoped to the bridges it created.
@usableFromInline
struct Reporter: Sendable {
    let fileID: String
    let line: UInt
    private let handler: Diagnostics.Handler

    @usableFromInline
    init(fileID: String, line: UInt) {
        self.fileID = fileID
        self.line = line
        self.handler = Diagnostics.current
    }

    /// Reports `kind` once per `bridge` (the subscriber or subscription misused); later
    /// occurrences only count (``BridgeDiagnostic/occurrences``).
    func report(_ kind: BridgeDiagnostic.Kind, _ message: String, bridge: AnyObject) {
        Diagnostics.deliver(kind, message, fileID: fileID, line: line, bridge: bridge, to: handler)
    }
}
