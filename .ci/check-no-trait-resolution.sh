#!/usr/bin/env bash
# The manifests the documentation gives a client resolve with this toolchain's SwiftPM:
# - README's (`Bridges`, no trait): Bridges alone, nothing fetched (the library's "no package
#   dependencies");
# - MIGRATION.md's for the macros (the `Macros` trait), verbatim but for where Bridges is: the
#   graph loads and holds swift-syntax;
# - README's `OpenCombine` trait for `BridgesCombine` on Linux: the graph loads and holds OpenCombine.
# A graph that does not load is an error here: SwiftPM's message ("product 'SwiftSyntaxMacros'
# required by package 'bridges' … not found in package 'swift-syntax'") names the dependency too,
# so finding its name in the output proves nothing; its line in the resolved tree does.
#
# SwiftPM 6.2.0 (Swift 6.2.0, Xcode 26.0.x) does not load the trait-guarded products of a
# dependency for a client (swiftlang/swift-package-manager#9141, fixed in 6.2.1, Xcode 26.1;
# swift-otel/swift-otel#357). The documentation says so and gives the workaround (the client
# declares the trait's dependency itself). On 6.2.0 this checks both halves of that sentence: the
# manifest as documented fails with that error, and with the workaround it loads. Should 6.2.0
# load the documented manifest after all, the check fails and says to drop the note.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$root/.build/ci-client"

version=$(swift --version 2>&1 | sed -n 's/.*Swift version \([0-9][0-9.]*\).*/\1/p' | head -1)
case "$version" in
6.2 | 6.2.0) swiftpm_620=1 ;;
*) swiftpm_620=0 ;;
esac

# client <name> <arguments of Package(…) after `name:`>: writes a client package, prints its
# dependency tree, returns show-dependencies' status.
client() {
    local arguments=$2
    rm -rf "$work"
    mkdir -p "$work"
    cat > "$work/Package.swift" <<MANIFEST
// swift-tools-version: 6.2
import PackageDescription
let package = Package(
    name: "Client",
    $arguments
)
MANIFEST
    for target in $(grep -o 'target(name: "[A-Za-z]*"' "$work/Package.swift" | sed 's/.*"\(.*\)"/\1/'); do
        mkdir -p "$work/Sources/$target"
        echo "public let \`$target\` = 0" > "$work/Sources/$target/$target.swift"
    done
    (cd "$work" && swift package show-dependencies 2>&1)
}

# The package's location in place of its URL: `.package(url: "…/Bridges", from: "x")` becomes
# `.package(name: "Bridges", path: "<root>")`, the rest of the line (traits) as written.
local_bridges() {
    sed -E "s#\.package\(url: \"https://github.com/bridges-swift/Bridges\", from: \"[0-9.]+\"#.package(name: \"Bridges\", path: \"$root\"#"
}

# The ```swift block after the first `<!-- snippet: manifest` comment following a heading.
documented_manifest() { # file heading
    awk -v heading="$2" '
        index($0, heading) == 1 { in_section = 1 }
        in_section && /<!-- snippet: manifest/ { want = 1; next }
        want && /^```swift/ { printing = 1; next }
        printing && /^```/ { exit }
        printing { print }
    ' "$1"
}

fail() { echo "== $1"; exit 1; }

# 1. No trait: Bridges alone, nothing fetched.
readme=$(documented_manifest "$root/README.md" "## Add it" | local_bridges)
[ -n "$readme" ] || fail "README.md's manifest (after '## Add it') was not found"
without=$(client readme "$readme") || { echo "$without"; fail "README's client manifest does not load (above)"; }
echo "$without"
if echo "$without" | grep -q "swift-syntax"; then
    fail "a package that depends on Bridges without the Macros trait resolved swift-syntax (above)"
fi
if [ -d "$work/.build/checkouts" ] && [ -n "$(ls -A "$work/.build/checkouts")" ]; then
    fail "a package that depends on Bridges without the Macros trait fetched: $(ls "$work/.build/checkouts")"
fi

# loads <what> <manifest arguments> <dependency>: the graph loads and holds the dependency, or, on
# SwiftPM 6.2.0, fails with #9141's error; then the workaround (the client declares the dependency)
# loads. The workaround's declaration: $4.
loads() {
    local what=$1 manifest=$2 dependency=$3 declaration=$4 output status=0
    output=$(client "$what" "$manifest") || status=$?
    echo "$output"
    if [ "$swiftpm_620" = 1 ]; then
        if [ "$status" = 0 ] && ! echo "$output" | grep -q "error:"; then
            fail "SwiftPM $version loads $what's documented manifest: #9141 does not affect it, drop the Xcode 26.0 note (MIGRATION.md, README.md)"
        fi
        echo "$output" | grep -q "not found in package '$dependency'" \
            || fail "$what's documented manifest fails on SwiftPM $version, but not with #9141's error (above)"
        echo "-- SwiftPM $version: fails as documented (#9141); with the workaround:"
        manifest=$(echo "$manifest" | sed "s#^dependencies: \[#dependencies: [\n        $declaration,#")
        status=0
        output=$(client "$what" "$manifest") || status=$?
        echo "$output"
    fi
    [ "$status" = 0 ] && ! echo "$output" | grep -q "error:" || fail "$what's client manifest does not load (above)"
    echo "$output" | grep -q "$dependency<" || fail "$what's client manifest loads without $dependency: this check cannot see it"
}

# 2. The Macros trait, MIGRATION.md's manifest.
macros=$(documented_manifest "$root/MIGRATION.md" "## One attribute per method" | local_bridges)
[ -n "$macros" ] || fail "MIGRATION.md's manifest for the macros was not found"
echo "$macros" | grep -q 'traits: \["Macros"\]' || fail "MIGRATION.md's macros manifest does not turn the Macros trait on"
loads macros "$macros" swift-syntax \
    '.package(url: "https://github.com/swiftlang/swift-syntax", "602.0.0"..<"604.0.0")'

# 3. The OpenCombine trait (Linux), README's line.
if [ "$(uname)" = Linux ]; then
    opencombine="dependencies: [
        .package(name: \"Bridges\", path: \"$root\", traits: [\"OpenCombine\"]),
    ],
    targets: [
        .target(name: \"MyApp\", dependencies: [.product(name: \"BridgesCombine\", package: \"Bridges\")]),
    ]"
    grep -q 'traits: \["OpenCombine"\]' "$root/README.md" || fail "README.md no longer documents the OpenCombine trait's manifest line"
    loads opencombine "$opencombine" opencombine \
        '.package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0")'
fi
rm -rf "$work"
echo "client manifests: without a trait, Bridges alone; with Macros, swift-syntax; with OpenCombine, OpenCombine (SwiftPM $version)"
