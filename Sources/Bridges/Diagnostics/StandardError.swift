// Where the default diagnostics handler writes: the platform's own channel for a library's
// warnings. On Apple platforms, a runtime issue (Xcode shows it as a purple warning while the app
// runs) and a line in the unified log; elsewhere, a compiler-style line on standard error.
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Bionic)
import Bionic
#endif
#if canImport(os)
import os
#endif
#if canImport(MachO)
import MachO
#endif

extension BridgeDiagnostic {
    /// `Module/File.swift:12: warning: Bridges misuse (kind): message`, the form compilers and
    /// editors read as a warning at a line.
    package var compilerStyleLine: String {
        "\(fileID):\(line): warning: Bridges misuse (\(kind)): \(message)"
    }
}

func _writeToStandardError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in
        _ = write(2, bytes.baseAddress, bytes.count)  // fd 2: no shared FILE* to race on
    }
}

#if canImport(os)
/// The Apple half of ``Diagnostics/platformHandler``. Cannot be compiled on Linux: audited by
/// hand in CONTRIBUTING.md. No stored state: reports are rare (once per bridge and kind), and
/// `OSLog` values are cached by the system.
enum UnifiedLog {
    static func report(_ diagnostic: BridgeDiagnostic) {
        let text = diagnostic.description
        // Xcode shows a fault in this subsystem as a runtime issue when it is logged on behalf of
        // a system image: SwiftUI's when the app has loaded it (as Point-Free's IssueReporting
        // does), else ours, which still reaches the log.
        let runtimeIssues = OSLog(subsystem: "com.apple.runtime-issues", category: "Bridges")
        text.withCString { os_log(.fault, dso: systemImage(), log: runtimeIssues, "%{public}s", $0) }
        // Filter with `log stream --predicate 'subsystem == "Bridges"'`, or in Console.app.
        let log = OSLog(subsystem: "Bridges", category: "Diagnostics")
        if #available(macOS 11.0, iOS 14.0, tvOS 14.0, watchOS 7.0, *) {
            Logger(log).warning("\(text, privacy: .public)")
        } else {
            text.withCString { os_log(.error, log: log, "%{public}s", $0) }
        }
    }

    private static func systemImage() -> UnsafeRawPointer {
        for index in 0..<_dyld_image_count() {
            if let name = _dyld_get_image_name(index), String(cString: name).hasSuffix("/SwiftUI"),
                let header = _dyld_get_image_header(index)
            {
                return UnsafeRawPointer(header)
            }
        }
        return UnsafeRawPointer(#dsohandle)
    }
}
#endif
