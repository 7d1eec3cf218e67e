import Foundation
import Testing

/// The layout list of contrib/docs/building-and-layout.md names every target of
/// Package.swift, and nothing that is not one: a module added or renamed shows here first.
@Suite struct LayoutListTests {
    @Test func theLayoutListNamesEverySourceTarget() throws {
        let repository = SettingDocumentationTests.repository
        let section = try String(contentsOf: repository.appendingPathComponent("contrib/docs/building-and-layout.md"), encoding: .utf8)
        let manifest = try String(contentsOf: repository.appendingPathComponent("Package.swift"), encoding: .utf8)
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
        #expect(listed == targets, "the layout list names \(listed.subtracting(targets).sorted()) that Package.swift has not; misses \(targets.subtracting(listed).sorted())")
        let directories = Set(try FileManager.default.contentsOfDirectory(atPath: repository.appendingPathComponent("Sources").path))
        #expect(directories == targets, "Sources/ holds \(directories.sorted()), Package.swift \(targets.sorted())")
    }
}
