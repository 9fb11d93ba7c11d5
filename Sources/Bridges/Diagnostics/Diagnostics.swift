import CBridgesRuntime

/// A misuse of a bridge, reported once through ``Diagnostics``.
///
/// Misuse never traps: the bridge ignores what it cannot honour (a second callback, a yield
/// after finish), keeps its promise to the awaiting side, and reports the problem here with
/// the call site of the bridge that was misused.
///
/// Each kind of misuse is reported once per bridge (or stream, or subscription): a publisher
/// that floods a stream with 100 000 unrequested elements costs one report, whose
/// ``occurrences`` keeps counting.
public struct BridgeDiagnostic: Sendable, CustomStringConvertible {
    /// What went wrong. A struct over a private code so that kinds can grow.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let code: String
        private init(_ code: String) { self.code = code }
        public var description: String { code }

        /// A single-shot callback was called after it had already completed the bridge.
        public static let callbackCalledTwice = Kind("callbackCalledTwice")
        /// A single-shot callback was released by the legacy API without being called.
        public static let callbackDropped = Kind("callbackDropped")
        /// A `(T?, Error?)` callback was called with neither a value nor an error.
        public static let callbackWithoutValueOrError = Kind("callbackWithoutValueOrError")
        /// A producer yielded (or sent) after its stream had already terminated.
        public static let yieldAfterFinish = Kind("yieldAfterFinish")
        /// A producer called `finish()` on a stream it had already finished.
        public static let finishCalledTwice = Kind("finishCalledTwice")
        /// A producer released every copy of a stream's sink without calling `finish()` (the
        /// multi-shot counterpart of ``callbackDropped``).
        public static let sinkDropped = Kind("sinkDropped")
        /// One iterator was advanced from two tasks at once.
        public static let concurrentIteration = Kind("concurrentIteration")
        /// A subscriber requested zero or negative demand.
        public static let invalidDemand = Kind("invalidDemand")
        /// A publisher sent more elements than were requested.
        public static let excessEmission = Kind("excessEmission")
        /// A task kept running, or kept its owner alive, after the owner should have been released.
        public static let ownerLifetime = Kind("ownerLifetime")
        /// A publisher sent a value before `receive(subscription:)`; the stream delivered it and
        /// finished.
        public static let valueBeforeSubscription = Kind("valueBeforeSubscription")
        /// A second loop was started on a file handle that a loop (or a `readabilityHandler`) is
        /// already reading; it ended at once.
        public static let fileHandleAlreadyRead = Kind("fileHandleAlreadyRead")
        /// Reading a file handle failed (it was closed while being read, or `read` failed); the
        /// stream ended.
        public static let fileHandleReadFailed = Kind("fileHandleReadFailed")
        /// Any other misuse; the message says what.
        public static func other(_ name: String) -> Kind { Kind(name) }
    }

    public let kind: Kind
    public let message: String
    /// `#fileID` of the bridge's call site (the `withCallback`, `CallbackStream`, … that was
    /// misused), or of the offending call where the API takes it (a sink's `yield` or `finish`
    /// after the end; the message then names the bridge's call site).
    public let fileID: String
    /// `#line` of the same call site.
    public let line: UInt

    /// Shared with the ledger that counts later occurrences; nil for a diagnostic made by hand.
    private let counter: MisuseOccurrences?

    /// How many times this bridge has been misused this way so far, this report included.
    ///
    /// Live: only the first occurrence is delivered to the handler, and later ones bump this
    /// count, so reading it later (say, when a test ends) gives the total. 1 for a diagnostic
    /// made with the public initializer.
    public var occurrences: Int { counter?.value ?? 1 }

    public init(kind: Kind, message: String, fileID: String, line: UInt) {
        self.init(kind: kind, message: message, fileID: fileID, line: line, occurrences: nil)
    }

    /// A diagnostic whose ``occurrences`` reads `occurrences`.
    package init(kind: Kind, message: String, fileID: String, line: UInt, occurrences: MisuseOccurrences?) {
        self.kind = kind
        self.message = message
        self.fileID = fileID
        self.line = line
        self.counter = occurrences
    }

    public var description: String { "\(fileID):\(line): Bridges misuse (\(kind)): \(message)" }
}

/// The one hook through which bridges report misuse.
///
/// Each bridge captures the handler in effect where it is created (its call site's task), and
/// reports to that handler even when the misuse happens later on another thread. So a test that
/// installs a handler with ``withHandler(_:operation:)`` sees exactly the misuse of the bridges
/// it created, even while other tests run in parallel.
///
/// The default handler, ``platformHandler``, reports through the platform's own channel: on
/// Apple platforms a runtime issue (Xcode's purple warning while the app runs) and a warning in
/// the unified log (subsystem `Bridges`, category `Diagnostics`); on Linux a compiler-style
/// `File.swift:12: warning: …` line on standard error. `BridgesTesting` installs one that turns
/// diagnostics into test failures. Replace it with ``defaultHandler`` (your app's logger, for
/// example).
public enum Diagnostics {
    public typealias Handler = @Sendable (BridgeDiagnostic) -> Void

    /// The process-wide handler, boxed. A function stored directly as a lock's generic state is
    /// reabstracted on every `inout` access, and `withLock { $0 }` writes the thunk back: each
    /// read wrapped the handler in one more thunk, growing the heap and, after ~100 000 reads,
    /// overflowing the stack when the handler was called. An immutable box is read by copying one
    /// reference; nothing is ever written back.
    private final class HandlerBox: Sendable {
        let handler: Handler
        init(_ handler: @escaping Handler) { self.handler = handler }
    }

    private static let global = LockedState<HandlerBox>(HandlerBox(Diagnostics.platformHandler))

    @usableFromInline @TaskLocal static var taskHandler: Handler?

    /// The process-wide handler, used where no task-local handler is installed.
    public static var defaultHandler: Handler {
        get { global.withLock { box in box }.handler }
        set {
            let replacement = HandlerBox(newValue)
            // The old handler is released after the lock, never under it (its captures may deinit).
            let old = global.withLock { box -> HandlerBox in
                defer { box = replacement }
                return box
            }
            withExtendedLifetime(old) {}
        }
    }

    /// The handler a bridge created here and now would report to.
    public static var current: Handler { installedTaskHandler ?? defaultHandler }

    /// The task-local handler, read only once some handler was ever installed in this process:
    /// before that none can be bound anywhere, and the read is skipped. What a bridge captures at
    /// creation (nil means "the default handler at report time", so creating a bridge never reads
    /// the default).
    @inlinable
    static var installedTaskHandler: Handler? {
        _bridges_diagnosticsHandlerEverInstalled() ? taskHandler : nil
    }

    /// Runs `operation` with `handler` receiving the misuse of every bridge created inside it.
    @discardableResult
    public static func withHandler<R>(
        _ handler: @escaping Handler,
        isolation: isolated (any Actor)? = #isolation,
        operation: () async throws -> R
    ) async rethrows -> R {
        _bridges_noteDiagnosticsHandlerInstalled()  // before the binding any task could see
        return try await $taskHandler.withValue(handler, operation: operation, isolation: isolation)
    }

    /// Synchronous form of ``withHandler(_:isolation:operation:)``.
    @discardableResult
    public static func withHandler<R>(_ handler: @escaping Handler, operation: () throws -> R) rethrows -> R {
        _bridges_noteDiagnosticsHandlerInstalled()  // before the binding any task could see
        return try $taskHandler.withValue(handler, operation: operation)
    }

    /// Delivers a report of `kind` on `bridge` to `handler` (nil: the default handler now),
    /// unless `bridge` already reported that kind: then it is only counted. The one path every
    /// bridge's report takes (through ``CallSite``).
    package static func dispatch(
        _ kind: BridgeDiagnostic.Kind, _ message: String, fileID: String, line: UInt,
        bridge: AnyObject?, to handler: Handler?
    ) {
        var occurrences: MisuseOccurrences?
        if let bridge {
            guard let first = MisuseLedger.record(kind, on: bridge) else { return }
            occurrences = first
        }
        let diagnostic = BridgeDiagnostic(
            kind: kind, message: message, fileID: fileID, line: line, occurrences: occurrences)
        (handler ?? defaultHandler)(diagnostic)
    }

    /// The default handler: on Apple platforms a runtime issue (Xcode shows a purple warning
    /// while the app runs) and a warning in the unified log (subsystem `Bridges`, category
    /// `Diagnostics`); elsewhere ``printToStandardError``.
    public static let platformHandler: Handler = { diagnostic in
        #if canImport(os)
        UnifiedLog.report(diagnostic)
        #else
        printToStandardError(diagnostic)
        #endif
    }

    /// Writes a compiler-style line to standard error: `Module/File.swift:12: warning: Bridges
    /// misuse (kind): message`.
    public static let printToStandardError: Handler = { diagnostic in
        _writeToStandardError(diagnostic.compilerStyleLine + "\n")
    }
}
