#!/usr/bin/env python3
"""Lists the Swift Testing tests that started and never ended in a `swift test` log.

`.ci/run` calls it when a test step exceeds its time bound, so that a hung run names the test
that hung instead of ending at CI's own limit with a log cut mid-line.
"""
import re
import sys

EVENT = re.compile(r"[◇✔✘━➜↳] Test (.+?) (started\.|passed|failed|with \d+ test cases? (?:passed|failed)|skipped)")

def main(path):
    started, ended = {}, set()
    with open(path, encoding="utf-8", errors="replace") as log:
        for number, line in enumerate(log, 1):
            match = EVENT.search(line)
            if not match:
                continue
            name, what = match.groups()
            if name == "run" or name.startswith("run with ") or name.startswith("case passing "):
                continue  # the whole run, and the cases of a parameterised test (which ends as one)
            if what == "started.":
                started.setdefault(name, number)
            else:
                ended.add(name)
    unfinished = [(line, name) for name, line in started.items() if name not in ended]
    if not unfinished:
        print("no test is left unfinished in the log (the step hung outside a test, or before the first one)")
        return
    print(f"{len(unfinished)} test(s) started and did not end:")
    for line, name in sorted(unfinished):
        print(f"  {name}  (started at log line {line})")

if __name__ == "__main__":
    main(sys.argv[1])
