#!/usr/bin/env python3
"""Proves that every snippet a user can copy is compiled code.

1. Every ```swift block in README.md, MIGRATION.md, GUARANTEES.md, COMING_FROM.md and the three
   GettingStarted articles compiles as pasted: each becomes the one file of its own target in a
   scratch package (.build-snippets/, a path dependency on this repository with the OpenCombine
   trait), with only the imports the block shows, built on Linux with one `swift build`. A block
   that is not a whole file, or that needs an Apple platform, says so in an HTML comment just
   before it, and is skipped with that reason printed:

    <!-- snippet: fragment — uses `client`, the reader's own legacy SDK -->
    <!-- snippet: apple-only — UIKit -->

   `--no-compile` skips this part (the marker checks below still run).

2. Every before/after `diff` block in MIGRATION.md, README.md and GUARANTEES.md is compiled code too:

A `diff` block preceded by a marker comment

    <!-- snippet: Path/To/File.swift#name -->

must match two marked regions of that file:

    // snippet:begin name.before          (the legacy code: the block's '-' and ' ' lines)
    // snippet:end name.before
    // snippet:begin name.after           (the bridged code: the block's '+' and ' ' lines)
    // snippet:end name.after

Lines are compared after removing the diff marker and common indentation. A region may be
missing on one side only if the block has no lines for it. Exits 1 naming every mismatch.
"""
import os
import pathlib
import re
import subprocess
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parent.parent
MARKER = re.compile(r"<!--\s*snippet:\s*(\S+?)#(\S+)\s*-->")
BEGIN = re.compile(r"^\s*//\s*snippet:begin\s+(\S+)\s*$")
END = re.compile(r"^\s*//\s*snippet:end\s+(\S+)\s*$")


def regions(path):
    found, open_regions = {}, {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if m := BEGIN.match(line):
            open_regions[m.group(1)] = []
            continue
        if m := END.match(line):
            name = m.group(1)
            if name not in open_regions:
                raise SystemExit(f"{path}:{number}: snippet:end {name} without begin")
            found[name] = open_regions.pop(name)
            continue
        for lines in open_regions.values():
            lines.append(line)
    if open_regions:
        raise SystemExit(f"{path}: unterminated snippet region(s): {', '.join(open_regions)}")
    return found


def normalise(lines):
    text = textwrap.dedent("\n".join(lines))
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def blocks(markdown):
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        m = MARKER.search(line)
        if not m:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j >= len(lines) or not lines[j].strip().startswith("```diff"):
            yield m.group(1), m.group(2), None, i + 1
            continue
        body = []
        j += 1
        while j < len(lines) and not lines[j].strip().startswith("```"):
            body.append(lines[j])
            j += 1
        yield m.group(1), m.group(2), body, i + 1


COMPILED_DOCS = ["README.md", "MIGRATION.md", "GUARANTEES.md", "COMING_FROM.md",
                 "Sources/Bridges/Bridges.docc/GettingStarted.md",
                 "Sources/BridgesCombine/BridgesCombine.docc/GettingStarted.md",
                 "Sources/BridgesTesting/BridgesTesting.docc/GettingStarted.md"]
SKIP = re.compile(r"<!--\s*snippet:\s*(fragment|apple-only)\s*[—-]+\s*(.+?)\s*-->")


def swift_blocks(doc):
    """(first line number of the code, code lines, skip marker or None) for each ```swift block."""
    lines = (ROOT / doc).read_text().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip().startswith("```swift"):
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith("```"):
                j += 1
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            skip = SKIP.search(lines[k]) if k >= 0 else None
            indent = len(lines[i]) - len(lines[i].lstrip())
            yield i + 2, [l[indent:] for l in lines[i + 1:j]], skip
            i = j
        i += 1


def compile_blocks():
    """Builds every unmarked ```swift block as its own target. Returns the error lines."""
    scratch = ROOT / ".build-snippets"
    targets, errors, where = [], [], {}
    for doc in COMPILED_DOCS:
        for line, code, skip in swift_blocks(doc):
            if skip:
                print(f"- {doc}:{line - 1}: skipped ({skip.group(1)}: {skip.group(2)})")
                continue
            name = f"Snippet{len(targets) + 1}"
            folder = scratch / "Sources" / name
            folder.mkdir(parents=True, exist_ok=True)
            for old in folder.iterdir():
                old.unlink()
            (folder / "Snippet.swift").write_text("\n".join(code) + "\n")
            targets.append(name)
            where[name] = (doc, line)
    for stale in (scratch / "Sources").iterdir() if (scratch / "Sources").exists() else []:
        if stale.name not in where:
            for old in stale.iterdir():
                old.unlink()
            stale.rmdir()
    if not targets:
        return errors
    products = ", ".join(f'.product(name: "{m}", package: "Bridges")' for m in ("Bridges", "BridgesCombine", "BridgesTesting"))
    manifest = f"""// swift-tools-version: 6.1
// Generated by .ci/check-snippets.py: one target per ```swift block of the docs.
import PackageDescription

let package = Package(
    name: "Snippets",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    dependencies: [
        .package(name: "Bridges", path: "{ROOT}", traits: ["OpenCombine"]),
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
    ],
    targets: [
""" + "".join(
        f'        .target(name: "{name}", dependencies: [{products}, .product(name: "OpenCombine", package: "OpenCombine")]),\n'
        for name in targets) + "    ]\n)\n"
    (scratch / "Package.swift").write_text(manifest)
    result = subprocess.run(["swift", "build", "--package-path", str(scratch)], capture_output=True, text=True)
    output = result.stdout + result.stderr
    if result.returncode != 0:
        # The build stops at the first failing target: build each on its own to name every error.
        for name in targets:
            one = subprocess.run(["swift", "build", "--package-path", str(scratch), "--target", name], capture_output=True, text=True)
            output += one.stdout + one.stderr
    diagnostic = re.compile(r"^(.*?/Sources/(Snippet\d+)/Snippet\.swift):(\d+):(\d+): (error|warning): (.*)$")
    for out_line in output.splitlines():
        m = diagnostic.match(out_line)
        if m and m.group(2) in where:
            doc, first = where[m.group(2)]
            errors.append(f"{doc}:{first + int(m.group(3)) - 1}: {m.group(5)}: {m.group(6)}")
    errors = list(dict.fromkeys(errors))
    if result.returncode != 0 and not errors:
        errors.append("swift build of the snippet package failed:\n" + output[-3000:])
    print(f"snippets: {len(targets)} ```swift blocks compiled as pasted, {len(errors)} diagnostics")
    return errors


def main():
    compile_errors = [] if "--no-compile" in sys.argv else compile_blocks()
    docs = [p for p in (ROOT / "MIGRATION.md", ROOT / "README.md", ROOT / "GUARANTEES.md") if p.exists()]
    errors, checked = [], 0
    cache = {}
    for doc in docs:
        for path, name, body, line in blocks(doc.read_text()):
            where = f"{doc.name}:{line}"
            if body is None:
                errors.append(f"{where}: snippet marker for {path}#{name} is not followed by a ```diff block")
                continue
            source = ROOT / path
            if not source.exists():
                errors.append(f"{where}: {path} does not exist")
                continue
            if source not in cache:
                cache[source] = regions(source)
            found = cache[source]
            before = normalise([l[1:] for l in body if l[:1] in ("-", " ") or l == ""])
            after = normalise([l[1:] for l in body if l[:1] in ("+", " ") or l == ""])
            for side, expected in (("before", before), ("after", after)):
                region = found.get(f"{name}.{side}")
                has_lines = any(l[:1] == ("-" if side == "before" else "+") for l in body)
                if region is None:
                    if has_lines:
                        errors.append(f"{where}: {path} has no region '{name}.{side}'")
                    continue
                actual = normalise(region)
                if actual != expected:
                    diff = "\n".join(f"      doc: {e!r}\n   source: {a!r}" for e, a in zip(expected + [''] * 99, actual + [''] * 99) if e != a)
                    errors.append(f"{where}: '{name}.{side}' differs from {path}:\n{diff.splitlines()[0]}\n{diff.splitlines()[1]}")
            checked += 1
    for e in compile_errors + errors:
        print("✘ " + e)
    print(f"snippets: {checked} diff blocks checked, {len(errors)} mismatched")
    return 1 if errors or compile_errors else 0


if __name__ == "__main__":
    sys.exit(main())
