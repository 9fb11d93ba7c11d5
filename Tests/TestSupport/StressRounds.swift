#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How many rounds a thread-stress test runs: `rounds`, scaled by the environment variable
/// `BRIDGES_STRESS_SCALE` (a fraction, at least one round).
///
/// CI sets it to 0.1 for the runs under ThreadSanitizer and AddressSanitizer only: a sanitizer
/// reports a race or a bad access from the accesses of the rounds that ran (happens-before, not
/// luck), so a tenth of the rounds finds what the sanitizer is there for, at a tenth of its
/// 5–20× slowdown. The plain runs, which find lost wake-ups and miscounts by repetition, run
/// every round.
package func stressRounds(_ rounds: Int) -> Int {
    guard let text = getenv("BRIDGES_STRESS_SCALE").map({ String(cString: $0) }), let scale = Double(text),
        scale > 0, scale < 1
    else { return rounds }
    return max(1, Int((Double(rounds) * scale).rounded()))
}
