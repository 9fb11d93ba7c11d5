// BridgesBenchmarks: every Bridges adapter against its peer, alternating, median of ≥ 5 runs.
//
//   swift run -c release --package-path Benchmarks BridgesBenchmarks [--quick] [case-prefix …]
//
// Prints progress, then a table, then one `RATIO <case> bridges=<ns/el> peer=<ns/el> speedup=<peer/bridges>`
// line per comparison and one `MEMORY <case> bridges=<bytes> peer=<bytes>` line per memory case.
// Exits 1 only if a case crashed or lost data its policy promises to keep; never on timing.

import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
let quick = arguments.contains("--quick")
let filters = arguments.filter { !$0.hasPrefix("--") }
let config = Config(quick: quick, repetitions: quick ? 5 : 7, filters: filters)

#if DEBUG
let buildInfo = "DEBUG build: numbers are meaningless, use -c release"
#else
let buildInfo = "release build"
#endif
print("Bridges benchmarks: \(quick ? "--quick" : "full") run, \(config.repetitions) repetitions, \(ProcessInfo.processInfo.activeProcessorCount) cores, \(buildInfo)")

let started = ContinuousClock.now
await runSingleShot(config)
await runSPSC(config)
await runWaiting(config)
await runMainActor(config)
await runCombine(config)
await runScaling(config)
await runMemory(config)

printReport(config: config, buildInfo: buildInfo)
print("total time: \(started.duration(to: .now))")
if !Report.shared.failures.isEmpty {
    print("")
    for f in Report.shared.failures { print("FAILED \(f)") }
    exit(1)
}
