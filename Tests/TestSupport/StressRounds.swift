#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How many rounds a thread-stress test runs: a tenth of `rounds` (at least one), or `rounds`
/// scaled by the environment variable `BRIDGES_STRESS_SCALE` (a positive fraction of the full
/// volume: `1` runs every round).
///
/// A tenth by default: the README's `swift test --traits OpenCombine` must pass on a busy machine
/// (CI runs it beside four busy processes on 2 cores), and every test of a parallel run shares
/// those cores for the whole run, under time limits of minutes. The full volume of the heaviest
/// racing pairs runs in the soak, in release mode (`Benchmarks/Sources/BridgesSoak/StressCases.swift`);
/// a sanitizer run finds what it is there for in a tenth of the rounds (a race or a bad access
/// is reported from the accesses of the rounds that ran: happens-before, not luck).
package func stressRounds(_ rounds: Int) -> Int {
    max(1, Int((Double(rounds) * stressScale).rounded()))
}

/// `BRIDGES_STRESS_SCALE`, or a tenth.
private let stressScale: Double = {
    guard let text = getenv("BRIDGES_STRESS_SCALE").map({ String(cString: $0) }), let scale = Double(text), scale > 0
    else { return 0.1 }
    return scale
}()
