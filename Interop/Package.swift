// swift-tools-version: 6.2
import PackageDescription

// BridgesTesting beside Point-Free's test tools, in one test process: swift-concurrency-extras'
// `withMainSerialExecutor` and swift-clocks' `TestClock` run before and after parallel
// `withSerialTasks` scopes, many rounds, and each finds the process as it expects it.
//
//   swift test --package-path Interop
//
// A package of its own so that users of Bridges never fetch these dependencies.
let package = Package(
    name: "BridgesInterop",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11)],
    dependencies: [
        // `name:` matters: without it the package is known by its folder's name and a clone elsewhere fails.
        .package(name: "Bridges", path: ".."),
        .package(url: "https://github.com/pointfreeco/swift-concurrency-extras", exact: "1.4.3"),
        .package(url: "https://github.com/pointfreeco/swift-clocks", exact: "1.1.1"),
    ],
    targets: [
        .testTarget(
            name: "InteropTests",
            dependencies: [
                .product(name: "Bridges", package: "Bridges"),
                .product(name: "BridgesTesting", package: "Bridges"),
                .product(name: "ConcurrencyExtras", package: "swift-concurrency-extras"),
                .product(name: "Clocks", package: "swift-clocks"),
            ]
        ),
    ]
)
