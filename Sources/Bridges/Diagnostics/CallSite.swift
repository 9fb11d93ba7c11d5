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
        self.handler = Diagnostics.installedTaskHandler
    }

    /// Reports `kind` once per `bridge`: the first occurrence goes to the handler, later ones
    /// only count (``BridgeDiagnostic/occurrences``). Pass `bridge: nil` only for misuse that
    /// cannot recur on one bridge, or that is reported from the bridge's own `deinit` (a weak
    /// reference cannot be formed there).
    @usableFromInline
    func report(_ kind: BridgeDiagnostic.Kind, _ message: String, bridge: AnyObject?) {
        Diagnostics.dispatch(kind, message, fileID: fileID, line: line, bridge: bridge, to: handler)
    }

    /// The same, reported at the offending call's site (`fileID`, `line`) rather than at the
    /// bridge's: for misuse the API can place (a sink's `yield` or `finish` after the end). A call
    /// made by one of this package's own adapters (a `Broadcast`, a publisher's stream, an
    /// operator) is reported at the bridge's site instead, which is in the user's code.
    @usableFromInline
    func report(_ kind: BridgeDiagnostic.Kind, _ message: String, bridge: AnyObject?, at fileID: String, line: UInt) {
        let inPackage = Self.packageModules.contains(fileID.prefix { $0 != "/" })
        Diagnostics.dispatch(
            kind, message, fileID: inPackage ? self.fileID : fileID, line: inPackage ? self.line : line,
            bridge: bridge, to: handler
        )
    }

    /// The library modules whose `#fileID`s are never the user's call site.
    static let packageModules: Set<Substring> = ["Bridges", "BridgesCombine", "BridgesTesting"]
}
