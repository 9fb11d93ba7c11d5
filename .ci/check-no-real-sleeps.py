#!/usr/bin/env python3
"""Tests and examples never sleep on real time to wait for behaviour.

Flags `Task.sleep`, `Thread.sleep`, `usleep(`, `nanosleep(` and `sleep(` calls on a real clock in
Tests/ and Examples/. Allowed: lines inside a `// snippet:begin NAME.before` region (the legacy
code MIGRATION.md shows as the thing to stop doing), sleeps on an injected clock
(`clock.sleep(`), and lines carrying a `// real-time:` comment that says why (stress tests
that must use real threads).
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# A bare `sleep(` is flagged only as C's `sleep(<number>)`: a closure named `sleep` injected
# from a clock (as WeatherSDK does) is virtual time, not a real wait.
SLEEP = re.compile(r"\b(Task\.sleep|Thread\.sleep|usleep|nanosleep)\s*\(|(?<![.\w])sleep\s*\(\s*\d")
problems = []
for path in sorted(list((ROOT / "Tests").rglob("*.swift")) + list((ROOT / "Examples").rglob("*.swift"))):
    in_before = False
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if re.search(r"//\s*snippet:begin\s+\S+\.before", line):
            in_before = True
        elif re.search(r"//\s*snippet:end\s+\S+\.before", line):
            in_before = False
        code = line.split("//", 1)[0]
        if SLEEP.search(code) and not in_before and "// real-time:" not in line:
            problems.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
for p in problems:
    print("✘ real-time sleep: " + p)
print(f"real-time sleeps in tests and examples: {len(problems)}")
sys.exit(1 if problems else 0)
