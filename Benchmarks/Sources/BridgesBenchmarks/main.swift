// BridgesBenchmarks: every Bridges adapter against its peer, alternating, median of ≥ 5 runs.
//
//   swift run -c release --package-path Benchmarks BridgesBenchmarks [--quick] [case-prefix …]
//       [--bridges-only | --peer-only | --limit-only]   one side only, for profiling
//       [--once] [--count=N] [--exact] [--list]          for Benchmarks/callgrind (see Harness.swift's Config)
//
// Prints progress, then a table, then one `RATIO <case> bridges=<ns/el> peer=<ns/el> speedup=<peer/bridges>`
// line per comparison and one `MEMORY <case> bridges=<bytes> peer=<bytes>` line per memory case.
// Exits 1 only if a case crashed or lost data its policy promises to keep (2 if one hung); never on timing.
//
// The main thread runs a RunLoop (as an app's does) rather than `dispatchMain()`: main-actor
// jobs are drained by the run loop, and valgrind (3.19) can run the binary — it crashes on
// dispatchMain's signal-handling main thread.

import CMallocInfo
import Foundation

@MainActor
func runAll() async -> Int32 {
    bench_line_buffered_stdout()
    let arguments = Array(CommandLine.arguments.dropFirst())
    let quick = arguments.contains("--quick")
    let filters = arguments.filter { !$0.hasPrefix("--") }
    var config = Config(quick: quick, repetitions: quick ? 5 : 7, filters: filters)
    if arguments.contains("--bridges-only") { config.side = .bridges }
    if arguments.contains("--peer-only") { config.side = .peer }
    if arguments.contains("--limit-only") { config.side = .limit }
    config.once = arguments.contains("--once")
    config.exact = arguments.contains("--exact")
    config.list = arguments.contains("--list")
    if let count = arguments.first(where: { $0.hasPrefix("--count=") }) {
        config.count = Int(count.dropFirst("--count=".count))
    }
    if config.once && config.side == .both {
        print("--once needs --bridges-only, --peer-only or --limit-only")
        return 2
    }
    Watchdog.shared.start()

    #if DEBUG
    let buildInfo = "DEBUG build: numbers are meaningless, use -c release"
    #else
    let buildInfo = "release build"
    #endif
    print(
        "Bridges benchmarks: \(quick ? "--quick" : "full") run, \(config.repetitions) repetitions, \(ProcessInfo.processInfo.activeProcessorCount) cores, \(buildInfo)"
    )

    print("load average at start: \(loadAverage())")
    let started = ContinuousClock.now
    await runSingleShot(config)
    await runSPSC(config)
    await runWaiting(config)
    await runMainActor(config)
    await runCombine(config)
    await runScaling(config)
    await runBroadcast(config)
    await runShare(config)
    await runMemory(config)
    await runOperators(config)
    await runCancelLatency(config)

    printReport(config: config, buildInfo: buildInfo)
    print("total time: \(started.duration(to: .now)); load average at end: \(loadAverage())")
    if !Report.shared.failures.isEmpty {
        print("")
        for f in Report.shared.failures { print("FAILED \(f)") }
        return 1
    }
    return 0
}

/// The 1/5/15-minute load averages: wall-clock figures of hand-over-heavy cases (rendezvous,
/// queue hops) move with what else the 2 cores are doing; compare only within one run.
func loadAverage() -> String {
    #if os(Linux)
    ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "n/a")
        .split(separator: " ").prefix(3).joined(separator: " ")
    #else
    "n/a"
    #endif
}

Task { @MainActor in
    let status = await runAll()
    fflush(nil)
    exit(status)
}
RunLoop.main.run()
