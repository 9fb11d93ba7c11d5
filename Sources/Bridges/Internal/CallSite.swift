/// Where a bridge was created, and the diagnostics handler in effect there.
@usableFromInline
struct CallSite: Sendable {
    @usableFromInline let fileID: String
    @usableFromInline let line: UInt
    /// The task-local handler at creation; nil means "the default handler at report time".
    @usableFromInline let handler: Diagnostics.Handler?

    @inlinable
    init(fileID: String, line: UInt) {
        self.fileID = fileID
        self.line = line
        self.handler = Diagnostics.taskHandler
    }

    @usableFromInline
    func report(_ kind: BridgeDiagnostic.Kind, _ message: String) {
        (handler ?? Diagnostics.defaultHandler)(BridgeDiagnostic(kind: kind, message: message, fileID: fileID, line: line))
    }
}
