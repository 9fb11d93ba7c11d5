#!/usr/bin/env python3
"""Proves that every snippet a user can copy is compiled code.

1. Every ```swift block of README.md, MIGRATION.md, GUARANTEES.md, COMING_FROM.md, the DocC
   articles (Sources/*/*.docc/*.md) and the public modules' doc comments (``` blocks in `///`)
   compiles in an app's context: a Swift 6 app over a legacy SDK in Swift 5 mode
   (Tests/LegacySDK: classes never made Sendable, a request handle, a manager with a weak
   delegate) and the app's own types (.ci/snippets-prelude.swift: a @MainActor view model, a
   test bench). An HTML comment just before the block (for a doc comment, on its `///` line)
   says where the block is pasted; without one it is a whole file:

    <!-- snippet: body — why: statements in a method of the @MainActor view model -->
    <!-- snippet: members — the view model's members -->
    <!-- snippet: test — statements in a test (Swift Testing, fakes) -->
    <!-- snippet: legacy / legacy-body / legacy-members — the app's Swift 5 code before a migration -->
    <!-- snippet: manifest / manifest-targets — Package.swift's arguments / a target -->
    <!-- snippet: compiled — Path/To/File.swift#name (who compiles it) -->
                        (the block is region `name` of that file, which another CI step compiles:
                         the macros' examples, in the package in Macros/ with the Macros trait)
    <!-- snippet: fragment — why nothing can compile it -->      (not compiled, printed)

   CONTEXTS below has the hidden lines of each. Blocks become the files of as few modules of one
   scratch package (.build-snippets/) as their names allow, built with one `swift build`;
   manifests are type-checked against PackageDescription. An error names the doc, its line and
   the compiler's message. `--no-compile` skips this part.

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
import shutil
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


MARKDOWN_DOCS = ["README.md", "MIGRATION.md", "GUARANTEES.md", "COMING_FROM.md"]
# The public modules' doc comments (BridgesMacrosImplementation is the compiler plug-in: not API).
DOC_COMMENT_SOURCES = ["Sources/Bridges", "Sources/BridgesCombine", "Sources/BridgesTesting", "Sources/BridgesMacros"]
CONTEXT_MARKER = re.compile(r"<!--\s*snippet:\s*([a-z-]+)\b\s*(?:[—-]+\s*(.+?))?\s*-->")
SKIPPED = ("fragment", "apple-only")
ELSEWHERE = "compiled"
REGION_REF = re.compile(r"(\S+\.swift)#(\S+)")

# Where a block is compiled: the code it is pasted into, as hidden lines around it. Every block
# also sees the prelude (.ci/snippets-prelude.swift: the app around the snippet, over the legacy
# SDK of Tests/LegacySDK) and the imports an app over Bridges has. `{n}` makes each name unique.
CONTEXTS = {
    # A whole file of the app (the default).
    "file": ("", ""),
    # A whole file of the app's Swift 5 code, before the migration.
    "legacy": ("", ""),
    # Statements in a method of the app's @MainActor view model (AppModel: client, manager, bag…),
    # its constant properties bound to locals of the same names (as a method that captures
    # `[manager]` has them), so that the statements' closures capture them, not `self`.
    "body": ("extension AppModel {\n    func snippet{n}() async throws {\n{locals}", "\n    }\n}\n"),
    # Members of that view model.
    "members": ("extension AppModel {\n", "\n}\n"),
    # Statements in a test (TestBench: fakes, clock, recorder…), with Swift Testing imported.
    "test": ("extension TestBench {\n    func snippet{n}() async throws {\n{locals}", "\n    }\n}\n"),
    # The legacy code a migration starts from: the app's Swift 5 module, before Bridges.
    "legacy-body": ("extension LegacyAppModel {\n    func snippet{n}() {\n", "\n    }\n}\n"),
    "legacy-members": ("extension LegacyAppModel {\n", "\n}\n"),
    # The arguments of a Package.swift's `Package(...)`, or a target list's elements.
    "manifest": ("import PackageDescription\n\nlet package = Package(\n    name: \"MyApp\",\n", "\n)\n"),
    "manifest-targets": ("import PackageDescription\n\nlet package = Package(\n    name: \"MyApp\",\n    targets: [\n", "\n    ]\n)\n"),
}
LEGACY = ("legacy", "legacy-body", "legacy-members")
HIDDEN_IMPORTS = "import Bridges\nimport BridgesCombine\nimport BridgesTesting\nimport Foundation\nimport LegacySDK\nimport OpenCombine\nimport OpenCombineDispatch\nimport SnippetPrelude\nimport Testing\n"
# Statements pasted into a function bind names they do not use further: not a defect of the snippet.
WRAPPED_NOISE = re.compile(r"(was never used|was never mutated|is unused|never used; consider)")
# Legacy code is the Swift 5 code a migration starts from: what Swift 6 would reject is its point.
LEGACY_NOISE = re.compile(r"this is an error in the Swift 6 language mode|add '@preconcurrency'")
PRELUDE = ROOT / ".ci/snippets-prelude.swift"


def locals_of(type_name, code):
    """`let (a, b) = (self.a, self.b)`: the constants `type_name` declares in the prelude (but
    those the block declares itself)."""
    text = PRELUDE.read_text()
    body = text[text.index(f"class {type_name} {{"):]
    body = body[:body.index("\n}\n")]
    own = set(re.findall(r"\b(?:let|var)\s+(\w+)", "\n".join(code)))
    names = [n for n in re.findall(r"^    public let (\w+)", body, re.M) if n not in own]
    return f"        let ({', '.join(names)}) = ({', '.join('self.' + n for n in names)})\n"


def fence(line):
    return line.strip().startswith("```")


def markdown_blocks(doc):
    """(first line of the code, code lines, marker match) for each ```swift block of a page."""
    lines = (ROOT / doc).read_text().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip().startswith("```swift"):
            j = i + 1
            while j < len(lines) and not fence(lines[j]):
                j += 1
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            marker = CONTEXT_MARKER.search(lines[k]) if k >= 0 else None
            indent = len(lines[i]) - len(lines[i].lstrip())
            yield i + 2, [l[indent:] for l in lines[i + 1:j]], marker
            i = j
        i += 1


def comment_blocks(path):
    """The same for the ```swift blocks of a source file's `///` comments."""
    lines = path.read_text().splitlines()
    strip = lambda l: l.strip()[3:][1:] if l.strip()[3:4] == " " else l.strip()[3:]
    i = 0
    while i < len(lines):
        if lines[i].strip().startswith("///") and strip(lines[i]).strip().startswith("```"):
            j = i + 1
            while j < len(lines) and lines[j].strip().startswith("///") and not fence(strip(lines[j])):
                j += 1
            k = i - 1
            while k >= 0 and lines[k].strip() == "///":
                k -= 1
            marker = CONTEXT_MARKER.search(lines[k]) if k >= 0 and lines[k].strip().startswith("///") else None
            if strip(lines[i]).strip().startswith("```swift"):
                yield i + 2, [strip(l) for l in lines[i + 1:j]], marker
            i = j
        i += 1


def all_blocks():
    docs = MARKDOWN_DOCS + sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("Sources/*/*.docc/*.md"))
    for doc in docs:
        for line, code, marker in markdown_blocks(doc):
            yield doc, line, code, marker
    for folder in DOC_COMMENT_SOURCES:
        for path in sorted((ROOT / folder).rglob("*.swift")):
            for line, code, marker in comment_blocks(path):
                yield str(path.relative_to(ROOT)), line, code, marker


DECLARATION = re.compile(r"^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|internal|final|open|nonisolated|static|indirect)\s+)*"
                         r"(?:class|struct|enum|actor|protocol|func|let|var|typealias)\s+(\w+)")


def declared_names(context, code, n):
    """The names a block adds to its module (two blocks that add one go to different modules)."""
    if context in ("body", "test", "legacy-body"):
        return {f"snippet{n}"}
    prefix = {"members": "AppModel.", "legacy-members": "LegacyAppModel."}.get(context, "")
    return {prefix + m.group(1) for line in code if (m := DECLARATION.match(line))}


def manifest_api():
    swift = pathlib.Path(subprocess.run(["which", "swift"], capture_output=True, text=True).stdout.strip()).resolve()
    return swift.parent.parent / "lib" / "swift" / "pm" / "ManifestAPI"


def compile_blocks():
    """Compiles every ```swift block in its context. Returns the error lines."""
    scratch = ROOT / ".build-snippets"
    sources = scratch / "Sources"
    if sources.exists():
        shutil.rmtree(sources)
    groups = []  # [language mode, names, [(file name, text)]]
    where, manifests, skipped, elsewhere, region_errors = {}, [], 0, 0, []
    for n, (doc, line, code, marker) in enumerate(all_blocks(), 1):
        context = marker.group(1) if marker else "file"
        if context == ELSEWHERE:
            # Compiled by another step: the block must be that file's region, line for line.
            ref = REGION_REF.search(marker.group(2) or "")
            source = ROOT / ref.group(1) if ref else None
            if source is None or not source.exists():
                region_errors.append(f"{doc}:{line - 1}: error: 'compiled' names no existing File.swift#region")
                continue
            region = regions(source).get(ref.group(2))
            if region is None:
                region_errors.append(f"{doc}:{line - 1}: error: {ref.group(1)} has no region '{ref.group(2)}'")
            elif normalise(region) != normalise(code):
                pairs = zip(normalise(code) + [""] * 999, normalise(region) + [""] * 999)
                first = next((d, r) for d, r in pairs if d != r)
                region_errors.append(f"{doc}:{line}: error: the block differs from {ref.group(1)}#{ref.group(2)}, "
                                     f"which CI compiles:\n      doc: {first[0]!r}\n   source: {first[1]!r}")
            else:
                elsewhere += 1
            continue
        if context in SKIPPED:
            print(f"- {doc}:{line - 1}: not compiled ({context}: {marker.group(2)})")
            skipped += 1
            continue
        if context not in CONTEXTS:
            where[f"marker{n}"] = (doc, line - 1, 0, context)
            continue
        locals = locals_of("TestBench" if context == "test" else "AppModel", code)
        before, after = (part.replace("{n}", str(n)).replace("{locals}", locals) for part in CONTEXTS[context])
        hidden = before if context.startswith("manifest") else HIDDEN_IMPORTS + "\n" + before
        text = hidden + "\n".join(code) + "\n" + after
        file = f"{re.sub(r'[^A-Za-z0-9]+', '_', doc)}_{line}.swift"
        where[file] = (doc, line, hidden.count("\n"), context)
        if context.startswith("manifest"):
            manifests.append((file, text))
            continue
        mode = 5 if context in LEGACY else 6
        # A module of blocks that neither redeclare a name nor see a name another one declares.
        names = declared_names(context, code, n)
        words = set(re.findall(r"\b[A-Za-z_]\w*\b", "\n".join(code)))
        group = next((g for g in groups if g[0] == mode and not g[1] & (names | words) and not names & g[3]), None)
        if group is None:
            group = [mode, set(), [], set()]
            groups.append(group)
        group[1] |= names
        group[3] |= words
        group[2].append((file, text))
    errors = region_errors + [
        f"{doc}:{line}: error: unknown snippet marker '{context}' (one of: {', '.join(list(CONTEXTS) + [ELSEWHERE] + list(SKIPPED))})"
        for file, (doc, line, _, context) in where.items() if file.startswith("marker")]

    (sources / "LegacySDK").mkdir(parents=True)
    shutil.copy(ROOT / "Tests/LegacySDK/LegacySDK.swift", sources / "LegacySDK")
    (sources / "SnippetPrelude").mkdir()
    shutil.copy(ROOT / ".ci/snippets-prelude.swift", sources / "SnippetPrelude/Prelude.swift")
    targets = []
    for index, (mode, _, files, _) in enumerate(groups, 1):
        name = f"Snippets{index}" + ("Swift5" if mode == 5 else "")
        (sources / name).mkdir()
        for file, text in files:
            (sources / name / file).write_text(text)
        targets.append((name, mode))
    products = "".join(f'.product(name: "{m}", package: "Bridges"), ' for m in ("Bridges", "BridgesCombine", "BridgesTesting"))
    products += ", ".join(f'.product(name: "{m}", package: "OpenCombine")' for m in ("OpenCombine", "OpenCombineDispatch"))
    five = ", swiftSettings: [.swiftLanguageMode(.v5)]"
    manifest = f"""// swift-tools-version: 6.1
// Generated by .ci/check-snippets.py: the docs' ```swift blocks, a file each, in as few modules as
// their names allow, over the prelude (SnippetPrelude) and the legacy SDK (LegacySDK, Swift 5).
import PackageDescription

let package = Package(
    name: "Snippets",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    dependencies: [
        .package(name: "Bridges", path: "{ROOT}", traits: ["OpenCombine"]),
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
    ],
    targets: [
        .target(name: "LegacySDK"{five}),
        .target(name: "SnippetPrelude", dependencies: ["LegacySDK", {products}]),
""" + "".join(
        f'        .target(name: "{name}", dependencies: ["LegacySDK", "SnippetPrelude", {products}]{five if mode == 5 else ""}),\n'
        for name, mode in targets) + "    ]\n)\n"
    (scratch / "Package.swift").write_text(manifest)

    outputs = []
    for file, text in manifests:
        (scratch / "Manifests").mkdir(exist_ok=True)
        (scratch / "Manifests" / file).write_text(text)
        one = subprocess.run(["swiftc", "-typecheck", "-swift-version", "6", "-package-description-version", "6.1",
                              "-I", str(manifest_api()),
                              str(scratch / "Manifests" / file)], capture_output=True, text=True)
        outputs.append(one.stdout + one.stderr)
    result = subprocess.run(["swift", "build", "--package-path", str(scratch)], capture_output=True, text=True)
    output = result.stdout + result.stderr
    if result.returncode != 0:
        # The build stops at the first module that fails: build each on its own to name every error.
        for name, _ in targets:
            if f"/Sources/{name}/" not in output:
                one = subprocess.run(["swift", "build", "--package-path", str(scratch), "--target", name],
                                     capture_output=True, text=True)
                output += one.stdout + one.stderr
    outputs.append(output)
    diagnostic = re.compile(r"^(?:.*/)?([^/\s]+\.swift):(\d+):(\d+): (error|warning): (.*)$")
    for out_line in "\n".join(outputs).splitlines():
        m = diagnostic.match(out_line)
        if m and m.group(1) in where:
            doc, first, hidden, context = where[m.group(1)]
            if m.group(4) == "warning" and context != "file" and WRAPPED_NOISE.search(m.group(5)):
                continue
            if m.group(4) == "warning" and context in LEGACY and LEGACY_NOISE.search(m.group(5)):
                continue
            offset = int(m.group(2)) - hidden - 1
            if 0 <= offset:
                errors.append(f"{doc}:{first + offset}: {m.group(4)}: {m.group(5)}")
            else:
                errors.append(f"{doc}:{first}: {m.group(4)} (in the hidden lines of context '{context}'): {m.group(5)}")
        elif m and (f"/Sources/SnippetPrelude/" in out_line or "/Sources/LegacySDK/" in out_line):
            errors.append(f".ci/snippets-prelude.swift or Tests/LegacySDK: {out_line}")
    errors = list(dict.fromkeys(errors))
    if result.returncode != 0 and not errors:
        errors.append("swift build of the snippet package failed:\n" + output[-3000:])
    compiled = len(where) - sum(1 for f in where if f.startswith("marker"))
    print(f"snippets: {compiled} ```swift blocks compiled in their context ({len(targets)} modules, "
          f"{len(manifests)} manifests), {elsewhere} compiled by another step (regions of a compiled file), "
          f"{skipped} not compiled, {len(errors)} diagnostics")
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
