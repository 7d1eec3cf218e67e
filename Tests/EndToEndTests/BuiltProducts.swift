import Foundation

/// Where `swift build` put the executables: next to the test bundle.
enum BuiltProducts {
    static let directory: URL = {
        var url = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        // Walk up out of a macOS .xctest bundle (Contents/MacOS/...) or a Linux .xctest binary.
        while url.pathComponents.count > 1 {
            url.deleteLastPathComponent()
            if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("notifyd").path) { return url }
        }
        return URL(fileURLWithPath: ".build/debug")
    }()

    static func path(_ name: String) -> String {
        directory.appendingPathComponent(name).path
    }
}
