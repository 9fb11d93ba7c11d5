// swift-tools-version: 6.2
import PackageDescription

// The macros' tests, with Bridges' `Macros` trait on: assertMacro expansion tests of every shape
// and diagnostic, and runtime tests of the generated code over a Swift 5-mode legacy SDK.
//
//   swift test --package-path Macros
//
// A package of its own so that only what the macros need is built with the trait (swift-syntax,
// Bridges, BridgesTesting), not the root package's other targets a second time, and so that users
// of Bridges never fetch swift-macro-testing. `MacroExpansions` is the root package's
// `Sources/BridgesMacrosImplementation`, linked under another module name (a package graph may
// not hold two modules of one name): the expansion tests call the macro types directly.
let package = Package(
    name: "BridgesMacrosTests",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    dependencies: [
        // `name:` matters: without it the package is known by its folder's name and a clone elsewhere fails.
        .package(name: "Bridges", path: "..", traits: ["Macros"]),
        .package(url: "https://github.com/swiftlang/swift-syntax", "602.0.0"..<"604.0.0"),
        .package(url: "https://github.com/pointfreeco/swift-macro-testing", from: "0.7.0"),
    ],
    targets: [
        .target(
            name: "MacroExpansions",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ],
            swiftSettings: [.define("Macros")]
        ),
        // A years-old SDK in Swift 5 mode that uses the macros.
        .target(
            name: "LegacyFixtures",
            dependencies: [
                .product(name: "Bridges", package: "Bridges"),
                .product(name: "BridgesMacros", package: "Bridges"),
                .product(name: "BridgesTesting", package: "Bridges"),
            ],
            path: "Tests/LegacyFixtures",
            swiftSettings: [.swiftLanguageMode(.v5), .define("Macros")]
        ),
        .testTarget(
            name: "BridgesMacrosTests",
            dependencies: [
                "MacroExpansions", "LegacyFixtures",
                .product(name: "Bridges", package: "Bridges"),
                .product(name: "BridgesMacros", package: "Bridges"),
                .product(name: "BridgesTesting", package: "Bridges"),
                .product(name: "MacroTesting", package: "swift-macro-testing"),
            ],
            swiftSettings: [.define("Macros")]
        ),
    ]
)
