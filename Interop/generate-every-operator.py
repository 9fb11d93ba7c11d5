#!/usr/bin/env python3
"""Writes Tests/InteropTests/BesideAsyncAlgorithms/EveryOperator.swift: every
swift-async-algorithms operator (and swift-concurrency-extras' few), and every Bridges operator
and bridge, on each kind of Bridges sequence, in each context where the type checker resolves a
call its own way.

    python3 Interop/generate-every-operator.py          # rewrite the file
    python3 Interop/generate-every-operator.py --check  # fail if the file is not what this writes

The lists below are the calls, written as each library documents them, with `S` for the
sequence. A new operator of either library is one line here; run the script and commit both.
"""
import pathlib
import re
import sys

OUTPUT = pathlib.Path(__file__).resolve().parent / "Tests/InteropTests/BesideAsyncAlgorithms/EveryOperator.swift"

# (function-name prefix, what the section is about, the sequence's expression)
SEQUENCES = [
    ("asyncStream", "an `AsyncStream<Int>`", "inputs.stream"),
    ("callbackStream", "a `CallbackStream<Int, Never>`", "inputs.callbackStream"),
    ("broadcast", "a `Broadcast<Int>`'s stream", "inputs.broadcast.stream()"),
    ("shared", "`shared()`'s output, a `SharedSequence<Int, Never>`", "inputs.shared"),
]

# A line ending in THROWS makes a sequence that throws: `for try await` in the loops.
THROWS = "  # throws"

# swift-async-algorithms 1.1.4: every operator on AsyncSequence and every free function that makes
# a sequence, each overload once; the last lines take swift-clocks' `.immediate` and `.test`.
ASYNC_ALGORITHMS = f"""
S.adjacentPairs()
chain(S, [1, 2].async)
chain(S, [1].async, [2].async)
S.chunked(by: {{ $0 <= $1 }})
S.chunked(into: [Int].self, by: {{ $0 <= $1 }})
S.chunked(on: {{ $0 % 2 }})
S.chunked(into: [Int].self, on: {{ $0 % 2 }})
S.chunks(ofCount: 2)
S.chunks(ofCount: 2, into: [Int].self)
S.chunks(ofCount: 2, or: inputs.signal)
S.chunks(ofCount: 2, or: inputs.signal, into: [Int].self)
S.chunked(by: inputs.signal)
S.chunked(by: inputs.signal, into: [Int].self)
S.chunks(ofCount: 2, or: .repeating(every: .seconds(1), clock: inputs.clock))
S.chunks(ofCount: 2, or: .repeating(every: .seconds(1), clock: inputs.clock), into: [Int].self)
S.chunked(by: .repeating(every: .seconds(1), clock: inputs.clock))
S.chunked(by: .repeating(every: .seconds(1)), into: [Int].self)
S.map {{ Optional($0) }}.compacted()
S.reductions(0) {{ $0 + $1 }}
S.reductions(into: 0) {{ $0 += $1 }}
S.reductions {{ $0 + $1 }}
S.reductions(0) {{ (sum: Int, x: Int) throws in sum + x }}{THROWS}
S.reductions(into: 0) {{ (sum: inout Int, x: Int) throws in sum += x }}{THROWS}
S.reductions {{ (a: Int, b: Int) throws in a + b }}{THROWS}
S.map {{ [$0].async }}.joined()
S.map {{ [$0].async }}.joined(separator: [0].async)
S.mapError(Boom.init(never:)){THROWS}
S.mapLatest {{ (x: Int) throws in x }}.mapError {{ _ in Boom() }}{THROWS}
S.removeDuplicates()
S.removeDuplicates(by: {{ $0 == $1 }})
S.removeDuplicates(by: {{ (a: Int, b: Int) throws in a == b }}){THROWS}
S.share()
S.share(bufferingPolicy: .bufferingLatest(2))
S.buffer(policy: .bounded(2))
S.buffer(policy: .unbounded)
combineLatest(S, inputs.other)
combineLatest(S, inputs.other, inputs.channel)
merge(S, inputs.other)
merge(S, inputs.other, inputs.channel)
zip(S, inputs.other)
zip(S, inputs.other, inputs.channel)
S.debounce(for: .seconds(1), clock: inputs.clock)
S.debounce(for: .seconds(1), tolerance: .milliseconds(10), clock: inputs.clock)
S.debounce(for: .seconds(1), clock: ContinuousClock())
S.debounce(for: .seconds(1))
S.debounce(for: .seconds(1), tolerance: .zero)
S.flatMapLatest {{ [$0].async }}
S.interspersed(with: 0)
S.interspersed(every: 2, with: 0)
S.interspersed(with: {{ 0 }})
S.interspersed(with: {{ () async in 0 }})
S.interspersed(with: {{ () throws in 0 }}){THROWS}
S.interspersed(every: 2, with: {{ () async throws in 0 }}){THROWS}
S._throttle(for: .seconds(1), clock: inputs.clock)
S._throttle(for: .seconds(1), clock: inputs.clock, latest: false)
S._throttle(for: .seconds(1))
S._throttle(for: .seconds(1), clock: inputs.clock, reducing: {{ (_: Int?, x: Int) in x }})
S._throttle(for: .seconds(1), reducing: {{ (_: Int?, x: Int) in x }})
S.debounce(for: .seconds(1), clock: .immediate)
S.debounce(for: .seconds(1), clock: .test)
S._throttle(for: .seconds(1), clock: .immediate)
S.chunked(by: .repeating(every: .seconds(1), clock: .immediate))
"""

# swift-concurrency-extras' operators on AsyncSequence and AsyncStream.
POINT_FREE = f"""
S.eraseToStream()
S.eraseToThrowingStream(){THROWS}
AsyncStream(S)
AsyncThrowingStream(S){THROWS}
"""

# swift-async-algorithms' collection initializers: they await, so only the async contexts have them.
ASYNC_ALGORITHMS_AWAITING = """
Array(S)
Set(S)
Dictionary(uniqueKeysWithValues: S.map { ($0, $0) })
Dictionary(S.map { ($0, $0) }, uniquingKeysWith: { first, _ in first })
Dictionary(grouping: S, by: { $0 % 2 })
"""

# Bridges' operators on the same sequence, and chained with swift-async-algorithms' ones.
BRIDGES = f"""
S.debounce(for: .seconds(1), clock: inputs.clock, buffering: .latest)
S.debounce(for: .seconds(1), tolerance: .zero, clock: ContinuousClock(), buffering: .unbounded)
S.debounce(for: .seconds(1), clock: .immediate, buffering: .latest)
S.debounce(for: .seconds(1), clock: BridgesTesting.TestClock(), buffering: .latest)
S.mapLatest {{ $0 }}
S.mapLatest(buffering: .latest) {{ $0 }}
S.mapLatest {{ (x: Int) throws in x }}{THROWS}
S.shared()
S.shared(replay: 1)
S.shared().stream(buffering: .latest)
S.removeDuplicates().debounce(for: .seconds(1), clock: inputs.clock, buffering: .latest)
S.debounce(for: .seconds(1), clock: inputs.clock).mapLatest {{ $0 }}
S.mapLatest {{ $0 }}.debounce(for: .seconds(1), clock: inputs.clock)
S.debounce(for: .seconds(1), clock: inputs.clock, buffering: .latest).removeDuplicates()
S.shared().removeDuplicates()
merge(S.mapLatest {{ $0 }}, S.debounce(for: .seconds(1), clock: inputs.clock, buffering: .latest))
"""

# Bridges' bridges and consumers that make no sequence (a publisher, a token, a recorder).
BRIDGES_OTHER = """
S.publisher()
S.eraseToAnyPublisher()
S.debounce(for: .seconds(1), clock: inputs.clock).publisher()
S.subscribe(onElement: { _ in })
S.subscribe(onElement: { _ in }, onFinish: { _ in })
S.forEach(weak: inputs.owner, in: inputs.bag) { _, _ in }
S.collectLatest(weak: inputs.owner, in: inputs.bag) { _, _ in }
S.debounce(for: .seconds(1), clock: inputs.clock).forEach(weak: inputs.owner, in: inputs.bag) { _, _ in }
S.record()
"""

# Bridges' consumers that await.
BRIDGES_AWAITING = """
S.collectLatest { _ in }
S.debounce(for: .seconds(1), clock: inputs.clock).collectLatest { _ in }
"""

HEADER = """\
// Generated by Interop/generate-every-operator.py: edit the lists there, run it, commit both.
//
// Every swift-async-algorithms operator (and swift-concurrency-extras' `eraseToStream` family), and
// every Bridges operator and bridge, on each kind of Bridges sequence, in each context where the
// type checker resolves a call its own way. A compile check: the build fails on an ambiguity
// ("ambiguous use of …") or a compiler crash (a `debounce` of both libraries crashed it with
// signal 11 in a `Task { for await … }`). Which library a call went to is checked at run time in
// ResolutionTests.swift.
//
// One section per sequence (an `AsyncStream`, a `CallbackStream`, a `Broadcast`'s stream, the
// output of `shared()`), each with the same calls in four contexts:
// - an `async` function: `for await element in <call> { use(element) }` (`for try await` where the
//   sequence throws);
// - `Task { … }` closures: the same loops, the ones that cannot throw in a closure of their own
//   (the shape that crashed);
// - a result builder: the bare call as a statement;
// - an autoclosure: `_ = later(<call>)`.
// Calls that await (collection initializers, `collectLatest`) are in the two async contexts.
//
// swift-async-algorithms' `debounce(for:clock:)` has no `buffering:`; Bridges' has it, and only it.
// `.immediate` and `.test` are swift-clocks' (BridgesTesting's are disfavored beside them).

import AsyncAlgorithms
import Bridges
import BridgesCombine
import BridgesTesting
import Clocks
import ConcurrencyExtras
"""


def calls(block, sequence):
    """The block's lines with `S` (a token of its own) replaced by the sequence's expression."""
    return [re.sub(r"(?<![A-Za-z_.])S(?![A-Za-z_])", sequence, line) for line in block.strip().splitlines()]


def throws(call):
    return call.endswith(THROWS)


def bare(call):
    return call[: -len(THROWS)] if throws(call) else call


def parenthesized(call):
    """Trailing closures as arguments (`f(a) { x }` -> `f(a, { x })`, `f { x }` -> `f({ x })`): in
    a `for … in` sequence a trailing closure is confusable with the loop's body (a warning)."""
    out, i = "", 0
    while i < len(call):
        if call[i] == "{" and call[i - 1 : i] == " " and (call[i - 2].isalnum() or call[i - 2] == ")"):
            depth, j = 0, i
            while True:
                depth += {"{": 1, "}": -1}.get(call[j], 0)
                if depth == 0:
                    break
                j += 1
            closure = parenthesized(call[i : j + 1])
            head = out[:-1]
            if head.endswith(")"):
                arguments = head[:-1]
                out = arguments + ("" if arguments.endswith("(") else ", ") + closure + ")"
            else:
                out = head + "(" + closure + ")"
            i = j + 1
        else:
            out += call[i]
            i += 1
    return out


def loop(call):
    keyword = "for try await" if throws(call) else "for await"
    return f"{keyword} element in {parenthesized(bare(call))} {{ use(element) }}"


def section(prefix, about, sequence):
    sequences = calls(ASYNC_ALGORITHMS, sequence) + calls(POINT_FREE, sequence) + calls(BRIDGES, sequence)
    awaiting = calls(ASYNC_ALGORITHMS_AWAITING, sequence)
    others = calls(BRIDGES_OTHER, sequence)
    bridges_awaiting = calls(BRIDGES_AWAITING, sequence)

    def async_body(indent, only):
        lines = [indent + loop(c) for c in sequences if only(c)]
        lines += [f"{indent}_ = await {c}" for c in awaiting]
        lines += [f"{indent}_ = {c}" for c in others]
        lines += [f"{indent}await {c}" for c in bridges_awaiting]
        return lines

    lines = [f"// MARK: - On {about}", ""]
    lines.append(f"func {prefix}_inAnAsyncFunction(_ inputs: Inputs) async throws {{")
    lines += async_body("    ", lambda c: True)
    lines += ["}", ""]
    lines.append(f"func {prefix}_inATask(_ inputs: Inputs) {{")
    lines.append("    Task {")
    lines += async_body("        ", lambda c: not throws(c))
    lines.append("    }")
    lines.append("    Task {")
    lines += ["        " + loop(c) for c in sequences if throws(c)]
    lines.append("    }")
    lines += ["}", ""]
    lines.append(f"func {prefix}_inAResultBuilder(_ inputs: Inputs) -> [Any] {{")
    lines.append("    built {")
    lines += ["        " + bare(c) for c in sequences + others]
    lines.append("    }")
    lines += ["}", ""]
    lines.append(f"func {prefix}_inAnAutoclosure(_ inputs: Inputs) {{")
    lines += [f"    _ = later({bare(c)})" for c in sequences + others]
    lines += ["}", ""]
    return "\n".join(lines)


def main():
    text = HEADER + "\n" + "\n".join(section(*s) for s in SEQUENCES)
    if "--check" in sys.argv[1:]:
        if not OUTPUT.exists() or OUTPUT.read_text() != text:
            print(f"{OUTPUT.name} is not what {pathlib.Path(__file__).name} writes: run it and commit both")
            return 1
        print(f"{OUTPUT.name} is up to date")
        return 0
    OUTPUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
