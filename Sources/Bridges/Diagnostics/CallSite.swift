/// Where a bridge was created, and the diagnostics handler in effect there: every module of the
/// package reports through it (BridgesCombine's bridges and BridgesTesting's fakes too).
///
/// Capturing the task-local handler at creation, and reporting to it later from any thread, is
/// what keeps a test's `Diagnostics.withHandler` scoped to the bridges it created. Without one,
/// reports go to the default handler in effect when they are made (creating a bridge never
/// reads it).
@usableFromInline
package struct CallSite: Sendable {
    @usableFromInline package let fileID: String
    /// The task-local handler at creation; nil means "the default handler at report time".
    @usableFromInline let handler: Diagnostics.Handler?
    // The line last and in 32 bits: 36 bytes, not 40, so a field that follows a `CallSite` in an
    // object (a flag) fits in its padding.
    @usableFromInline let line32: UInt32

    @inlinable
    package var line: UInt { UInt(line32) }

    @inlinable
    package init(fileID: String, line: UInt) {
        self.fileID = fileID
        self.handler = Diagnostics.installedTaskHandler
        self.line32 = UInt32(clamping: line)
    }

    /// Reports `kind` once per `bridge`: the first occurrence goes to the handler, later ones
    /// only count (``BridgeDiagnostic/occurrences``). Pass `bridge: nil` only for misuse that
    /// cannot recur on one bridge, or that is reported from the bridge's own `deinit` (a weak
    /// reference cannot be formed there).
    @usableFromInline
    package func report(_ kind: BridgeDiagnostic.Kind, _ message: String, bridge: AnyObject?) {
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
