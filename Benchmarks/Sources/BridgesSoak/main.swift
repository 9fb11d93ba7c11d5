// BridgesSoak: every adapter, 100 000 times each (fewer for the Foundation sources), in release
// mode, with misuse reported through the *default* handler. For each kind it asserts that the
// heap (glibc's mallinfo2) came back to its baseline within a small constant, that every object
// the soak made was released, and that the counts of elements and of reports are exact; it
// prints bytes/op per kind and exits non-zero if anything failed.
//
//   swift run -c release --package-path Benchmarks BridgesSoak [name-prefix …]
//   BRIDGES_SOAK_SCALE=4 … runs 4× the ops (a leak grows with them; one-off runtime growth does not)
//
// Before the default handler was boxed (each read wrapped it in one more thunk), each kind run
// alone in its own process: publisher.stream (every policy), sequence.publisher(), AsyncFuture
// ≈ 96 B/op (9.6 MB per 100 000); every kind misused through the default handler (withCallback
// called 3x or dropped, CallbackStream/Broadcast after finish, the publisher flood,
// request(.none)) and the default-handler reads crashed (SIGSEGV, stack overflow); the rest
// ≤ 1 B/op. After: every kind within ±4 B/op of zero (FileHandle ≤ 20 B/op over 20 000 ops,
// one-off), nothing crashes.

import Bridges
import CMallocInfo
import Foundation

#if canImport(Glibc)
import Glibc
#endif

bench_line_buffered_stdout()

let filters = Array(CommandLine.arguments.dropFirst())
func selected(_ soak: SoakCase) -> Bool {
    filters.isEmpty || filters.contains { soak.name.hasPrefix($0) }
}

let all =
    diagnosticsCases() + singleShotCases() + callbackStreamCases() + broadcastCases()
    + foundationCases() + combineCases() + lifetimeCases() + stressCases()

print(
    pad("kind", 52), lpad("ops", 8), lpad("elements", 10), lpad("reports", 8), lpad("heap Δ", 10), lpad("B/op", 8),
    lpad("s", 6), " result")
func printRow(_ r: SoakResult) {
    print(
        pad(r.name, 52), lpad("\(r.ops)", 8), lpad("\(r.elements)", 10), lpad("\(r.reports)", 8),
        lpad("\(r.heapDelta)", 10), lpad(String(format2(r.bytesPerOp)), 8), lpad(format2(r.seconds), 6),
        r.failures.isEmpty ? " ok" : " FAILED: " + r.failures.joined(separator: "; ")
    )
}
func format2(_ x: Double) -> String {
    let scaled = (x * 100).rounded() / 100
    return "\(scaled)"
}

let started = ContinuousClock.now
var results: [SoakResult] = []
let previousHandler = Diagnostics.defaultHandler
Diagnostics.defaultHandler = reports.handler
for soak in all where selected(soak) {
    let result = await run(soak)
    printRow(result)
    results.append(result)
}
let printing = printToStandardErrorCase()
if selected(printing) {
    // Standard error goes to a file meanwhile, so that the lines printed can be counted: one
    // per bridge and kind, for the warm-up op and the measured one (3 + 3), not one per misuse.
    let captured = "/tmp/bridges-soak-stderr-\(getpid()).log"
    let savedStandardError = dup(2)
    let file = open(captured, O_CREAT | O_RDWR | O_TRUNC, 0o600)
    dup2(file, 2)
    Diagnostics.defaultHandler = Diagnostics.printToStandardError
    var result = await run(printing)
    Diagnostics.defaultHandler = reports.handler
    dup2(savedStandardError, 2)
    close(file)
    close(savedStandardError)
    let lines = ((try? String(contentsOfFile: captured, encoding: .utf8)) ?? "")
        .split(separator: "\n").filter { $0.contains("Bridges misuse") }
    unlink(captured)
    if lines.count != 6 { result.failures.append("standard error got \(lines.count) lines, expected 6") }
    printRow(result)
    for line in Set(lines).sorted() { print("    stderr: \(line)") }
    results.append(result)
}
Diagnostics.defaultHandler = previousHandler

let failed = results.filter { !$0.failures.isEmpty }
print(
    "\nsoak: \(results.count) kinds, \(results.reduce(0) { $0 + $1.ops }) ops in \(format2(seconds(since: started))) s; \(failed.count) failed"
)
exit(failed.isEmpty ? 0 : 1)
