// swift-tools-version: 6.2
import PackageDescription

// Bridges beside the packages an app most often imports with it, in one test process:
// - BridgesTesting beside Point-Free's test tools: swift-concurrency-extras'
//   `withMainSerialExecutor` and swift-clocks' `TestClock` run before and after parallel
//   `withSerialTasks` scopes, many rounds, and each finds the process as it expects it.
// - Bridges, BridgesCombine and BridgesTesting beside swift-async-algorithms and the Point-Free
//   packages (`BesideAsyncAlgorithms/`): every swift-async-algorithms operator and every Bridges
//   operator and bridge, on each kind of Bridges sequence, in each context where the type checker
//   resolves a call its own way. The build fails on an ambiguity or a compiler crash; the tests
//   check which library each call went to.
//
//   swift test --package-path Interop
//
// One test target: a module that imports a package in one file sees its extensions in every
// file (the default until `MemberImportVisibility`), as an app does.
// A package of its own so that users of Bridges never fetch these dependencies.
let package = Package(
    name: "BridgesInterop",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    dependencies: [
        // `name:` matters: without it the package is known by its folder's name and a clone elsewhere fails.
        // The trait gives BridgesCombine OpenCombine on Linux; on Apple platforms it uses Combine.
        .package(name: "Bridges", path: "..", traits: ["OpenCombine"]),
        .package(url: "https://github.com/pointfreeco/swift-concurrency-extras", exact: "1.4.3"),
        .package(url: "https://github.com/pointfreeco/swift-clocks", exact: "1.1.1"),
        .package(url: "https://github.com/apple/swift-async-algorithms", exact: "1.1.4"),
        // Only for `import OpenCombine` in the tests on Linux (Bridges' own dependency, same version).
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
    ],
    targets: [
        .testTarget(
            name: "InteropTests",
            dependencies: [
                .product(name: "Bridges", package: "Bridges"),
                .product(name: "BridgesCombine", package: "Bridges"),
                .product(name: "BridgesTesting", package: "Bridges"),
                .product(name: "ConcurrencyExtras", package: "swift-concurrency-extras"),
                .product(name: "Clocks", package: "swift-clocks"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: [.linux])),
            ]
        ),
    ]
)
