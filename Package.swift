// swift-tools-version:6.0
import PackageDescription

// notifyd depends on the Swift toolchain alone: no package dependencies.
// Licensed under the Apache License, Version 2.0: see LICENSE.

// contrib/build-release.sh sets NOTIFYD_PACK_RELOCATIONS=1 on Linux when the toolchain has
// ld.lld and the C library reads packed relative relocations (DT_RELR, glibc 2.36 and
// later). A release notifyd is then linked by lld with them packed: 7 KB of relocations
// instead of 930 KB to read at every start, and 1-2 MiB less memory idle
// (contrib/benchmarks/RESULTS.md). notifyctl keeps the default linker, whose layout starts it faster.
let notifydLinkerSettings: [LinkerSetting] = Context.environment["NOTIFYD_PACK_RELOCATIONS"] == "1"
    ? [.unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"], .when(platforms: [.linux], configuration: .release))]
    : []

// Generic types' metadata reached directly, by accessor functions with the conformances
// passed in, rather than found by demangling the type's name at its first use, which checks
// each conformance the name requires by scanning every conformance record of the binary.
// That was most of what a short-lived notifyctl did: for the modules it is made of,
// `send --wait` 1.41 M → 1.15 M instructions (callgrind; contrib/benchmarks/RESULTS.md).
// The accessors cost some 4 KB of code.
let metadataAccessors: [SwiftSetting] = [
    .unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"], .when(configuration: .release)),
]

// Which build this is, for `notifyctl ping` and `--version`: two builds of one version
// must be told apart. $NOTIFYD_BUILD, which build-release.sh sets from git and build-deb.sh
// from the package's version; SwiftPM reads the manifest again when it changes. Not
// Context.gitInformation: the manifest's evaluation is cached across commits, so a build
// would name the commit of the last time the manifest was read. Letters, digits,
// `.+~:_-`, spaces and commas only: it goes into C source as a string literal.
let buildText = Context.environment["NOTIFYD_BUILD"] ?? ""
let buildDefine: [CSetting] = [.define("NOTIFYD_BUILD", to: "\"" + buildText.filter { $0.isLetter || $0.isNumber || ".+~:_-, ".contains($0) } + "\"")]

let package = Package(
    name: "notifyd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "notifyd", targets: ["notifyd"]),
        .executable(name: "notifyctl", targets: ["notifyctl"]),
        .executable(name: "notify-devbackend", targets: ["notify-devbackend"]),
    ],
    targets: [
        // Wire types, and the text both programs take from people (durations, did-you-mean
        // suggestions): no I/O, FoundationEssentials only.
        .target(name: "NotifyProtocol", dependencies: ["CBuildInfo"], swiftSettings: metadataAccessors),
        // The build's name (package revision, git commit), given by Package.swift.
        .target(name: "CBuildInfo", cSettings: buildDefine),
        // Foundation's JSON coders set as the wire wants them: notifyd's and the tests', not
        // notifyctl's (JSONValueDecoder and JSONValueEncoder read and write its lines).
        .target(name: "NotifyCoding", dependencies: ["NotifyProtocol"]),
        // Threads and descriptors: the few system calls every module shares.
        .target(name: "NotifySystem", swiftSettings: metadataAccessors),
        // Unix socket plumbing and socket path resolution shared by daemon and client.
        .target(name: "NotifySocket", dependencies: ["NotifySystem"], swiftSettings: metadataAccessors),
        // The system's libcurl, loaded at run time: notifyd's HTTP client on Linux.
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        // The kernel's news of links, addresses, routes and clock changes on Linux (netlink, timerfd).
        .target(name: "CNetworkWatch"),
        // Backend client, registration state machine, state and credential stores.
        .target(name: "NotifyCore", dependencies: ["NotifyProtocol", "NotifyCoding", "NotifySystem", .target(name: "CCurl", condition: .when(platforms: [.linux]))]),
        // Socket server, connections, command routing, lifecycle.
        .target(name: "NotifyDaemon", dependencies: ["NotifyCore", "NotifyProtocol", "NotifyCoding", "NotifySocket", "NotifySystem", "CNetworkWatch"]),
        // The socket client used by notifyctl and the tests.
        .target(name: "NotifyClient", dependencies: ["NotifyProtocol", "NotifySocket", "NotifySystem"], swiftSettings: metadataAccessors),
        // In-memory stand-in for the tutorial's ASP.NET AppBackend.
        .target(name: "DevBackend", dependencies: ["NotifySocket", "NotifyProtocol", "NotifySystem"]),

        .executableTarget(name: "notifyd", dependencies: ["NotifyDaemon"], linkerSettings: notifydLinkerSettings),
        .executableTarget(name: "notifyctl", dependencies: ["NotifyClient"], swiftSettings: metadataAccessors),
        .executableTarget(name: "notify-devbackend", dependencies: ["DevBackend"]),

        // Helpers the test targets share.
        .target(name: "CPseudoTerminal", path: "Tests/CPseudoTerminal"),
        .target(name: "NotifyTestSupport", dependencies: ["NotifySystem", "CPseudoTerminal"], path: "Tests/NotifyTestSupport"),
        .testTarget(name: "NotifyProtocolTests", dependencies: ["NotifyProtocol", "NotifyCoding", "NotifyTestSupport"]),
        .testTarget(name: "NotifyCoreTests", dependencies: ["NotifyCore", "NotifyCoding", "DevBackend", "NotifyTestSupport"]),
        .testTarget(name: "NotifyDaemonTests", dependencies: ["NotifyDaemon", "NotifyCoding", "NotifyClient", "DevBackend", "NotifyTestSupport"]),
        .testTarget(name: "DevBackendTests", dependencies: ["DevBackend", "NotifyProtocol", "NotifyTestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["NotifyClient", "DevBackend", "NotifyTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
