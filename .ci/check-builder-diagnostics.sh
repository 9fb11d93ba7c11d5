#!/usr/bin/env bash
# Proves, against the built Bridges module, that the withCallback builder never silently drops
# a returned Cancellation (issue 14, item 4):
# - each .ci/builder-diagnostics/rejected-*.swift (a body with guard, do/catch or while ending in
#   a token) fails to type-check, every error being the unavailable fallback's message that
#   says what to write;
# - .ci/builder-diagnostics/allowed.swift (if/else, switch, for, if #available, and the two
#   fixes the message asks for) type-checks with no warning at all;
# - each untyped-late-*.swift (an untyped multi-statement `onLateResult:` written before the body,
#   which Swift cannot type) fails with only the message that says to write it after the body or
#   type `late`, and allowed-late.swift (the forms that compile) has no warning.
# Needs the module built (CI's `swift test --traits OpenCombine` has built it; otherwise this
# builds the Bridges target, with the same trait so the build is reused).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=.ci/builder-diagnostics
expected='this body would drop a Cancellation it ends with'
bin="$(swift build --traits OpenCombine --show-bin-path)"
modules="$bin/Modules"
[ -f "$modules/Bridges.swiftmodule" ] || [ -d "$modules/Bridges.swiftmodule" ] \
    || swift build --traits OpenCombine --target Bridges >/dev/null
# Bridges imports its C target (CBridgesRuntime) in inlinable code: its clients need the module
# map SwiftPM generated for it, as they do inside a package build.
typecheck() {
    swiftc -swift-version 6 -parse-as-library -typecheck -I "$modules" \
        -Xcc "-fmodule-map-file=$bin/CBridgesRuntime.build/module.modulemap" "$dir/Legacy.swift" "$@" 2>&1
}

failed=0
for file in "$dir"/rejected-*.swift; do
    if output="$(typecheck "$file")"; then
        echo "FAIL $file compiles: a Cancellation it ends with is silently dropped"; failed=1; continue
    fi
    errors="$(grep -E '^[^ ].*: error: ' <<<"$output" || true)"
    if ! grep -qF "$expected" <<<"$errors" || grep -vqF "$expected" <<<"$errors"; then
        echo "FAIL $file: expected only the error \"$expected …\", got:"; echo "$errors"; failed=1; continue
    fi
    echo "ok   $file is rejected with the message"
done

late='an untyped onLateResult: closure written before the body cannot learn what'
for file in "$dir"/untyped-late-*.swift; do
    if output="$(typecheck "$file")"; then
        echo "FAIL $file compiles: an untyped onLateResult: before the body must fail with the message"; failed=1; continue
    fi
    errors="$(grep -E '^[^ ].*: error: ' <<<"$output" || true)"
    if ! grep -qF "$late" <<<"$errors" || grep -vqF "$late" <<<"$errors"; then
        echo "FAIL $file: expected only the error \"$late …\", got:"; echo "$errors"; failed=1; continue
    fi
    echo "ok   $file is rejected with the message"
done

for file in "$dir/allowed.swift" "$dir/allowed-late.swift"; do
    if output="$(typecheck -warnings-as-errors "$file")"; then
        echo "ok   $file compiles without warnings"
    else
        echo "FAIL $file must compile without warnings:"; echo "$output"; failed=1
    fi
done
exit $failed
