import Foundation
import Testing

/// The README's layout list names every target of Package.swift, and nothing that is not
/// one: a module added or renamed shows here first.
@Suite struct LayoutListTests {
    @Test func theReadmeLayoutListNamesEverySourceTarget() throws {
        let repository = SettingDocumentationTests.repository
        let readme = try String(contentsOf: repository.appendingPathComponent("README.md"), encoding: .utf8)
        let manifest = try String(contentsOf: repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## Building and layout").dropFirst().first?.components(separatedBy: "\n## ").first)
        // "Sources/CCurl            the system's libcurl…", and one line naming several:
        // "Sources/notifyd, notifyctl, notify-devbackend   the executables".
        let listed = Set(section.split(separator: "\n").filter { $0.hasPrefix("Sources/") }.flatMap { line in
            (line.dropFirst("Sources/".count).components(separatedBy: "   ").first ?? "")
                .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        })
        // Test targets, and what only the tests use (declared with a path under Tests/), are not listed.
        let targets = Set(manifest.matches(of: /\.(?:target|executableTarget)\(name: "([^"]+)"([^\n]*)/)
            .filter { !$0.output.1.hasSuffix("Tests") && !$0.output.2.contains("path: \"Tests/") }
            .map { String($0.output.1) })
        #expect(listed == targets, "README lists \(listed.subtracting(targets).sorted()) that Package.swift has not; misses \(targets.subtracting(listed).sorted())")
        let directories = Set(try FileManager.default.contentsOfDirectory(atPath: repository.appendingPathComponent("Sources").path))
        #expect(directories == targets, "Sources/ holds \(directories.sorted()), Package.swift \(targets.sorted())")
    }
}
