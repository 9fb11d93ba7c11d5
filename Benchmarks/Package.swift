// swift-tools-version: 6.2
import PackageDescription

// Bridges benchmarks: a plain release-mode executable that measures each Bridges adapter against
// its peer (AsyncStream, AsyncChannel, MultiProducerSingleConsumerAsyncChannel, OpenCombine's
// `.values`, a hand-written continuation bridge) in the same process run.
//
//   swift run -c release --package-path Benchmarks BridgesBenchmarks [--quick] [case-prefix …]
//
// No ordo-one/benchmark: its 70–140 s clean build would dominate the CI smoke run.
let package = Package(
    name: "BridgesBenchmarks",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    dependencies: [
        // `name:` matters: without it the package is known by its folder's name and a clone elsewhere fails.
        .package(name: "Bridges", path: "..", traits: ["OpenCombine"]),
        .package(url: "https://github.com/apple/swift-async-algorithms", exact: "1.1.4"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
    ],
    targets: [
        .target(name: "CMallocInfo"),
        .executableTarget(
            name: "BridgesBenchmarks",
            dependencies: [
                .product(name: "Bridges", package: "Bridges"),
                .product(name: "BridgesCombine", package: "Bridges"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: [.linux])),
                "CMallocInfo",
            ]
        ),
        // A release-mode soak of every adapter (heap back to baseline, objects released, exact
        // counts, misuse through the default handler): `swift run -c release --package-path Benchmarks BridgesSoak`.
        .executableTarget(
            name: "BridgesSoak",
            dependencies: [
                .product(name: "Bridges", package: "Bridges"),
                .product(name: "BridgesCombine", package: "Bridges"),
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: [.linux])),
                // DemandRecordingPublisher, a demand-aware source, for two cases. Linux only, where
                // the soak runs: on macOS an executable that links XCTest does not load.
                .product(name: "BridgesTesting", package: "Bridges", condition: .when(platforms: [.linux])),
                "CMallocInfo",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
