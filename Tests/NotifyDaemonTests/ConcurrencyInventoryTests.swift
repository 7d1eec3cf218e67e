import Foundation
import Testing

/// contrib/docs/concurrency.md counts what is left outside structured concurrency in
/// `Sources/` (unstructured tasks, continuations, `@unchecked Sendable`), and says each has a
/// comment beside it saying why. These keep both true as the code changes.
struct ConcurrencyInventoryTests {
    enum Kind: String, CaseIterable {
        case task = "unstructured tasks"
        case continuation = "continuations"
        case unchecked = "`@unchecked Sendable`"

        var pattern: String {
            switch self {
            case .task: #"\bTask\s*\{|\bTask\.detached\b|\bTask\(priority"#
            case .continuation: #"\bwith(Checked|Unsafe)(Throwing)?Continuation\b"#
            case .unchecked: #"@unchecked\s+Sendable"#
            }
        }
    }

    struct Site: CustomStringConvertible {
        var file: String
        var line: Int
        var kind: Kind
        var commented: Bool
        var description: String { "\(file):\(line)" }
    }

    /// Every site in `Sources/`, outside comments; commented when a `//` comment is on its
    /// line or on one of the three lines above it.
    static func sites() throws -> [Site] {
        let sources = SettingDocumentationTests.repository.appendingPathComponent("Sources")
        guard let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil) else { return [] }
        let patterns = try Kind.allCases.map { ($0, try Regex($0.pattern)) }
        var found: [Site] = []
        for case let url as URL in files where url.pathExtension == "swift" {
            let lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
            for (index, line) in lines.enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//") else { continue }
                for (kind, pattern) in patterns where line.contains(pattern) {
                    let above = lines[max(0, index - 3)..<index].map { $0.trimmingCharacters(in: .whitespaces) }
                    let commented = line.contains("//") || above.contains { $0.hasPrefix("//") }
                    found.append(Site(file: String(url.path.dropFirst(sources.path.count + 1)), line: index + 1, kind: kind, commented: commented))
                }
            }
        }
        return found
    }

    @Test func eachSiteSaysWhy() throws {
        let bare = try Self.sites().filter { !$0.commented }
        #expect(bare.isEmpty, "say beside each why it is not structured or checked (contrib/docs/concurrency.md): \(bare)")
    }

    @Test func theWriteUpCountsWhatIsThere() throws {
        let document = try String(contentsOf: SettingDocumentationTests.repository.appendingPathComponent("contrib/docs/concurrency.md"), encoding: .utf8)
        let sites = try Self.sites()
        #expect(sites.count > 0)
        for kind in Kind.allCases {
            let count = sites.filter { $0.kind == kind }.count
            #expect(document.contains("| \(kind.rawValue) | \(count) |"), "contrib/docs/concurrency.md should count \(count) \(kind.rawValue)")
        }
    }
}
