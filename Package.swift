// swift-tools-version: 6.2
import CompilerPluginSupport
import PackageDescription

// Bridges: completion handlers, delegates and publishers ⇄ async/await.
//
// The only dependency is OpenCombine, behind the `OpenCombine` trait, which is off by default
// and applies on Linux only: with the trait off nothing is fetched, for this package or its users.
// On Apple platforms `BridgesCombine` uses Apple's Combine.

/// OpenCombine for `BridgesCombine`, BridgesTesting's `DemandRecordingPublisher` and the examples
/// that use Combine: Linux, with the trait on.
let openCombineOnLinux: Target.Dependency = .product(
    name: "OpenCombine",
    package: "OpenCombine",
    condition: .when(platforms: [.linux], traits: ["OpenCombine"])
)

/// swift-syntax, used only by targets of the `Macros` trait: with the trait off, SwiftPM does not
/// fetch it, for this package or its users.
func macros(_ product: String, _ package: String) -> Target.Dependency {
    .product(name: product, package: package, condition: .when(traits: ["Macros"]))
}

/// The OS versions each group of APIs above the package's floor (`platforms` below) needs,
/// defined once and named in `@available(…, *)`: `BridgesClock` the `Clock` and `Duration`
/// APIs, `BridgesCombineValues` Combine's `Publisher.values`, `BridgesObservation` the
/// Observation framework, `BridgesTypedSequence` `AsyncSequence.Failure` (typed-throws
/// sequences). On Linux availability is not checked.
let availability: [SwiftSetting] = [
    "BridgesClock:macOS 13.0, iOS 16.0, tvOS 16.0, watchOS 9.0, visionOS 1.0",
    "BridgesCombineValues:macOS 12.0, iOS 15.0, tvOS 15.0, watchOS 8.0, visionOS 1.0",
    "BridgesObservation:macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, visionOS 1.0",
    "BridgesTypedSequence:macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0",
].map { .enableExperimentalFeature("AvailabilityMacro=\($0)") }

/// An example program in `Examples/<name>` (its README is not a source).
func example(_ name: String, dependencies: [Target.Dependency], exclude: [String] = []) -> Target {
    .executableTarget(
        name: name,
        dependencies: dependencies,
        path: "Examples/\(name)",
        exclude: ["README.md"] + exclude,
        swiftSettings: availability
    )
}

let package = Package(
    name: "Bridges",
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6), .visionOS(.v1)],
    products: [
        .library(name: "Bridges", targets: ["Bridges"]),
        .library(name: "BridgesCombine", targets: ["BridgesCombine"]),
        .library(name: "BridgesTesting", targets: ["BridgesTesting"]),
        // `@Bridged`, `@BridgedAll`, `@BridgedCompletion`: empty unless the `Macros` trait is on.
        .library(name: "BridgesMacros", targets: ["BridgesMacros"]),
        // No product for the tour: `swift run BridgesTour` runs an executable target of the root
        // package, and users of the package are not handed a demo executable.
    ],
    traits: [
        .trait(
            name: "OpenCombine",
            description: "On Linux, build BridgesCombine against OpenCombine (Apple platforms always use Combine)."
        ),
        .trait(
            name: "Macros",
            description: "Build BridgesMacros (@Bridged and friends), which needs swift-syntax."
        ),
    ],
    dependencies: [
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
        .package(url: "https://github.com/swiftlang/swift-syntax", "602.0.0"..<"604.0.0"),
    ],
    targets: [
        .target(name: "Bridges", dependencies: ["CBridgesRuntime"], swiftSettings: availability),
        // What needs C (see its header): a flag read without a lock, and the futex lock on Linux.
        .target(name: "CBridgesRuntime"),
        .target(name: "BridgesCombine", dependencies: ["Bridges", openCombineOnLinux], swiftSettings: availability),
        .target(
            name: "BridgesTesting", dependencies: ["Bridges", "BridgesQuiescence", openCombineOnLinux],
            swiftSettings: availability),
        // BridgesTesting's helpers without XCTest and Testing (its folders, linked), for the
        // executables: an executable that links a test framework does not load on macOS.
        .target(
            name: "ExampleTesting", dependencies: ["Bridges", "BridgesQuiescence", openCombineOnLinux],
            swiftSettings: availability),
        // withSerialTasks' scheduler: the one owner of the runtime's enqueue hook in a process, shared
        // by BridgesTesting and ExampleTesting (both are linked into the package's test bundle).
        .target(name: "BridgesQuiescence", dependencies: ["Bridges"], swiftSettings: availability),
        .executableTarget(
            name: "BridgesTour",
            dependencies: ["Bridges", "BridgesCombine", "ExampleTesting"],
            swiftSettings: availability
        ),
        .testTarget(
            name: "BridgesTests",
            dependencies: ["Bridges", "BridgesTesting", "ExampleSupport", "LegacySDK", "TestSupport"],
            swiftSettings: availability
        ),
        // A Swift 5 legacy SDK (nothing Sendable) for the tests of the documented Swift 6 patterns;
        // .ci/check-snippets.py builds the docs' snippets against the same file.
        .target(name: "LegacySDK", path: "Tests/LegacySDK", swiftSettings: [.swiftLanguageMode(.v5)]),
        // The test suites' shared helpers (errors, gates, counters, collections), each defined
        // once, on Bridges' own `LockedState` (package API).
        .target(name: "TestSupport", dependencies: ["Bridges"], path: "Tests/TestSupport", swiftSettings: availability),
        .testTarget(
            name: "BridgesCombineTests",
            dependencies: ["Bridges", "BridgesCombine", "BridgesTesting", "TestSupport"],
            swiftSettings: availability
        ),

        // Macros (the `Macros` trait): the expansion code, the compiler plugin that serves it, and
        // the library that declares the macros. Each source is `#if Macros`. Their tests are the
        // package in Macros/ (`swift test --package-path Macros`), which turns the trait on.
        .target(
            name: "BridgesMacrosImplementation",
            dependencies: [macros("SwiftSyntaxMacros", "swift-syntax"), macros("SwiftDiagnostics", "swift-syntax")]
        ),
        .macro(
            name: "BridgesMacrosPlugin",
            dependencies: [
                .target(name: "BridgesMacrosImplementation", condition: .when(traits: ["Macros"])),
                macros("SwiftSyntaxMacros", "swift-syntax"), macros("SwiftCompilerPlugin", "swift-syntax"),
            ]
        ),
        .target(
            name: "BridgesMacros",
            dependencies: ["Bridges", .target(name: "BridgesMacrosPlugin", condition: .when(traits: ["Macros"]))],
            swiftSettings: availability
        ),
        .testTarget(
            name: "BridgesTestingTests", dependencies: ["Bridges", "BridgesQuiescence", "BridgesTesting", "TestSupport"],
            swiftSettings: availability),

        // Examples: small realistic programs, each run by CI and tested in ExamplesTests.
        .target(name: "ExampleSupport", path: "Examples/Support", swiftSettings: availability),
        example("MovieStore", dependencies: ["Bridges", "ExampleSupport"]),
        example("LogTailer", dependencies: ["Bridges", "ExampleSupport"]),
        example("FeedReader", dependencies: ["Bridges", "ExampleSupport"]),
        example("WeatherSDK", dependencies: ["Bridges", "ExampleTesting", "ExampleSupport"]),
        example("AccountsScreen", dependencies: ["Bridges", "BridgesCombine", "ExampleTesting", openCombineOnLinux]),
        example("SearchScreen", dependencies: ["Bridges", "ExampleTesting", openCombineOnLinux]),
        example("ProfileScreen", dependencies: ["Bridges", "ExampleTesting", "ProfileLegacyKit"], exclude: ["LegacyKit"]),
        .target(
            name: "ProfileLegacyKit",
            path: "Examples/ProfileScreen/LegacyKit",
            swiftSettings: [.swiftLanguageMode(.v5)] + availability
        ),
        .testTarget(
            name: "ExamplesTests",
            dependencies: [
                "MovieStore", "LogTailer", "FeedReader", "WeatherSDK", "AccountsScreen", "SearchScreen", "ProfileScreen",
                // ExampleTesting, as the examples themselves: importing BridgesTesting too would
                // show every helper twice.
                "ExampleSupport", "Bridges", "ExampleTesting",
            ],
            swiftSettings: availability
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Documentation: `BRIDGES_DOCS=1 swift package generate-documentation --target Bridges`.
// The DocC plugin is added only when asked for, so it never enters users' dependency graph.
// `Context.environment` (PackageDescription 6.0+) is the supported way for a manifest to read the
// environment: SwiftPM knows the manifest depends on it and re-evaluates it when it changes.
if Context.environment["BRIDGES_DOCS"] != nil {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}
