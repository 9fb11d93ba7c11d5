// swift-tools-version: 6.1
import PackageDescription

// Bridges: completion handlers, delegates and publishers ⇄ async/await.
//
// The only dependency is OpenCombine, behind the `OpenCombine` trait, which is off by default
// and applies on Linux only: with the trait off nothing is fetched, for this package or its users.
// On Apple platforms `BridgesCombine` uses Apple's Combine.
let package = Package(
    name: "Bridges",
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6)],
    products: [
        .library(name: "Bridges", targets: ["Bridges"]),
        .library(name: "BridgesCombine", targets: ["BridgesCombine"]),
        .library(name: "BridgesTesting", targets: ["BridgesTesting"]),
        // No product for the tour: `swift run BridgesTour` runs an executable target of the root
        // package, and users of the package are not handed a demo executable.
    ],
    traits: [
        .trait(
            name: "OpenCombine",
            description: "On Linux, build BridgesCombine against OpenCombine (Apple platforms always use Combine)."
        ),
    ],
    dependencies: [
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
    ],
    targets: [
        .target(name: "Bridges", dependencies: ["CBridgesRuntime"]),
        // Below the standard library (see its header): the concurrency runtime's cancellation check,
        // callable without a retain, and a four-byte futex lock for Linux.
        .target(name: "CBridgesRuntime"),
        .target(
            name: "BridgesCombine",
            dependencies: [
                "Bridges",
                .product(
                    name: "OpenCombine",
                    package: "OpenCombine",
                    condition: .when(platforms: [.linux], traits: ["OpenCombine"])
                ),
            ]
        ),
        .target(name: "BridgesTesting", dependencies: ["Bridges"]),
        .executableTarget(
            name: "BridgesTour",
            dependencies: ["Bridges", "BridgesCombine", "BridgesTesting"]
        ),
        .testTarget(name: "BridgesTests", dependencies: ["Bridges", "BridgesTesting", "ExampleSupport"]),

        // Examples: small realistic programs, each run by CI and tested in ExamplesTests.
        .target(name: "ExampleSupport", path: "Examples/Support"),
        .executableTarget(name: "MovieStore", dependencies: ["Bridges", "ExampleSupport"], path: "Examples/MovieStore", exclude: ["README.md"]),
        .executableTarget(name: "LogTailer", dependencies: ["Bridges", "ExampleSupport"], path: "Examples/LogTailer", exclude: ["README.md"]),
        .executableTarget(name: "FeedReader", dependencies: ["Bridges", "ExampleSupport"], path: "Examples/FeedReader", exclude: ["README.md"]),
        .executableTarget(name: "WeatherSDK", dependencies: ["Bridges", "BridgesTesting", "ExampleSupport"], path: "Examples/WeatherSDK", exclude: ["README.md"]),
        .executableTarget(
            name: "AccountsScreen",
            dependencies: [
                "Bridges", "BridgesCombine", "BridgesTesting",
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: [.linux], traits: ["OpenCombine"])),
            ],
            path: "Examples/AccountsScreen", exclude: ["README.md"]
        ),
        .executableTarget(
            name: "SearchScreen",
            dependencies: [
                "Bridges", "BridgesTesting",
                .product(name: "OpenCombine", package: "OpenCombine", condition: .when(platforms: [.linux], traits: ["OpenCombine"])),
            ],
            path: "Examples/SearchScreen", exclude: ["README.md"]
        ),
        .target(name: "ProfileLegacyKit", path: "Examples/ProfileScreen/LegacyKit", swiftSettings: [.swiftLanguageMode(.v5)]),
        .executableTarget(name: "ProfileScreen", dependencies: ["Bridges", "BridgesTesting", "ProfileLegacyKit"], path: "Examples/ProfileScreen", exclude: ["README.md", "LegacyKit"]),
        .testTarget(name: "ExamplesTests", dependencies: ["MovieStore", "LogTailer", "FeedReader", "SearchScreen", "WeatherSDK", "AccountsScreen", "ExampleSupport", "Bridges", "BridgesTesting"]),
        .testTarget(name: "BridgesCombineTests", dependencies: ["Bridges", "BridgesCombine", "BridgesTesting"]),
        .testTarget(name: "BridgesTestingTests", dependencies: ["Bridges", "BridgesTesting"]),
    ],
    swiftLanguageModes: [.v6]
)

// ProfileScreen (issue 14) is tested in ExamplesTests too; added here so its line above stays untouched.
package.targets.first { $0.name == "ExamplesTests" }?.dependencies.append("ProfileScreen")

// Documentation: `BRIDGES_DOCS=1 swift package generate-documentation --target Bridges`.
// The DocC plugin is added only when asked for, so it never enters users' dependency graph.
// `Context.environment` (PackageDescription 6.0+) is the supported way for a manifest to read the
// environment: SwiftPM knows the manifest depends on it and re-evaluates it when it changes.
if Context.environment["BRIDGES_DOCS"] != nil {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}
