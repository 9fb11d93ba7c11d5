#!/usr/bin/env bash
# A package that depends on Bridges without the `Macros` trait resolves and fetches nothing but
# Bridges (the library's "no package dependencies"); with the trait, swift-syntax comes in. The
# second half keeps the first honest: it proves the listing shows swift-syntax when it is there.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$root/.build/ci-client"

dependencies() { # traits-argument
    rm -rf "$work"
    mkdir -p "$work/Sources/Client"
    cat > "$work/Package.swift" <<MANIFEST
// swift-tools-version: 6.2
import PackageDescription
let package = Package(
    name: "Client",
    dependencies: [.package(name: "Bridges", path: "$root"$1)],
    targets: [.target(name: "Client", dependencies: [.product(name: "Bridges", package: "Bridges")])]
)
MANIFEST
    echo "import Bridges" > "$work/Sources/Client/Client.swift"
    (cd "$work" && swift package show-dependencies 2>&1)
}

without=$(dependencies "")
echo "$without"
if echo "$without" | grep -q "swift-syntax"; then
    echo "== a package that depends on Bridges without the Macros trait resolved swift-syntax (above)"; exit 1
fi
if [ -d "$work/.build/checkouts" ] && [ -n "$(ls -A "$work/.build/checkouts")" ]; then
    echo "== a package that depends on Bridges without the Macros trait fetched: $(ls "$work/.build/checkouts")"; exit 1
fi
with=$(dependencies ', traits: ["Macros"]')
echo "$with" | grep "swift-syntax" || { echo "== with the Macros trait the listing shows no swift-syntax: this check cannot see it"; echo "$with"; exit 1; }
rm -rf "$work"
echo "without the Macros trait: Bridges alone; with it: swift-syntax"
