#!/usr/bin/env python3
"""Proves that every before/after in MIGRATION.md (and README.md) is compiled code.

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
import pathlib
import re
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


def main():
    docs = [p for p in (ROOT / "MIGRATION.md", ROOT / "README.md") if p.exists()]
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
    for e in errors:
        print("✘ " + e)
    print(f"snippets: {checked} checked, {len(errors)} mismatched")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
