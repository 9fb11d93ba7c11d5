import Bridges

#if canImport(Combine)
import Combine
#elseif OpenCombine
import OpenCombine
#endif

#if !canImport(Combine) && !OpenCombine
// Not `#error`: a package whose targets depend on BridgesCombine but use it only under
// `#if canImport(Combine) || OpenCombine` (this package's own tour, built by `swift run
// BridgesTour` without traits) must still build. The warning names what is missing instead of
// leaving users with "has no member 'stream'" on an empty module.
#warning(
    "BridgesCombine is empty on this platform: Combine is not available. Enable the package trait \"OpenCombine\" (swift build --traits OpenCombine, or .package(url: …, from: …, traits: [\"OpenCombine\"]) in your Package.swift)"
)
#endif
