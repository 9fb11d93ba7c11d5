#!/usr/bin/env python3
"""GUARANTEES.md's table must name real tests, one per row.

Every row of the table in GUARANTEES.md (the page the README links as its Guarantees) ends with a
cell naming a test as
`SuiteType/testFunction`; this check fails if that function is not declared as a test in
that suite type anywhere under Tests/.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
page = ROOT / "GUARANTEES.md"
if not page.exists():
    sys.exit("GUARANTEES.md is missing: it holds the Guarantees table the README links to")
table = page.read_text()
rows = [l for l in table.splitlines() if l.startswith("|") and not set(l) <= set("|-: ")]
rows = rows[1:]  # header
# Group headings: a bold first cell and nothing else.
rows = [r for r in rows if any(c.strip() for c in r.strip("|").split("|")[1:])]
sources = {p: p.read_text() for p in (ROOT / "Tests").rglob("*.swift")}
errors = 0
for row in rows:
    names = re.findall(r"`([A-Za-z0-9_]+)/([A-Za-z0-9_]+)`", row.rsplit("|", 2)[-2])
    if not names:
        print(f"✘ row names no test: {row}")
        errors += 1
        continue
    for suite, test in names:
        found = False
        for text in sources.values():
            m = re.search(rf"\b(struct|final class|class|extension)\s+{suite}\b", text)
            if m and re.search(rf"@Test[^\n]*\s*func\s+{test}\(|func\s+{test}\(\)", text[m.start():]):
                found = True
                break
        if not found:
            print(f"✘ {suite}/{test} named in GUARANTEES.md does not exist")
            errors += 1
print(f"guarantees: {len(rows)} rows, {errors} problems")
sys.exit(1 if errors else 0)
