// swift-tools-version:6.0
import PackageDescription

// The dev backend alone: an in-memory stand-in for the tutorial's AppBackend,
// with no package dependencies.
let package = Package(
    name: "notifyd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "notify-devbackend", targets: ["notify-devbackend"]),
    ],
    targets: [
        .target(name: "DevBackend"),
        .executableTarget(name: "notify-devbackend", dependencies: ["DevBackend"]),
        .testTarget(name: "DevBackendTests", dependencies: ["DevBackend"]),
    ],
    swiftLanguageModes: [.v6]
)
