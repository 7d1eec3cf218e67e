import Foundation
import Testing

/// The README is read top to bottom in ten minutes, and everything past that is in
/// contrib/docs/, reached by links: so the README stays short, and no link it or a doc
/// holds leads to a file or a section that is not there (a heading renamed breaks its
/// `#anchor` silently on every web page that shows it).
@Suite struct ReadmeLinkTests {
    static let longestReadme = 300

    @Test func theReadmeIsShort() throws {
        let lines = try MarkdownFile(relative: "README.md").text.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        #expect(lines <= Self.longestReadme, "README.md has \(lines) lines; move the detail to contrib/docs/ and link it")
    }

    @Test func everyLinkOfTheReadmeAndTheDocsLeadsToAFileAndASectionThatExist() throws {
        var checked = 0
        for file in try MarkdownFile.readmeAndDocs() {
            for link in file.links {
                #expect(link.problem == nil, "\(file.relative): [\(link.text)](\(link.target)): \(link.problem ?? "")")
                checked += 1
            }
        }
        #expect(checked > 10, "the links were found")
    }

    /// A doc nothing links to is one no reader finds.
    @Test func everyDocIsReachedFromTheReadme() throws {
        var reached: Set<String> = ["README.md"]
        var queue = ["README.md"]
        while let next = queue.popLast() {
            for link in try MarkdownFile(relative: next).links where link.problem == nil {
                guard let target = link.file, target.hasSuffix(".md"), !reached.contains(target) else { continue }
                reached.insert(target)
                queue.append(target)
            }
        }
        let docs = try MarkdownFile.docs().map(\.relative)
        #expect(Set(docs).subtracting(reached).isEmpty, "not reached from README.md: \(Set(docs).subtracting(reached).sorted())")
    }

    /// The checker itself: a missing file, a missing section and a good link, each told apart.
    @Test func theCheckerTellsAMissingFileFromAMissingSection() throws {
        let file = MarkdownFile(relative: "contrib/docs/example.md", text: """
            # Example
            ## The `ping` command (alias `hello`)
            [a](#the-ping-command-alias-hello) [b](#gone) [c](settings.md#the-settings-table-that-is-not) [d](missing.md)
            [e](https://example.org/x) `[f](not-a-link.md)`
            ```
            [g](inside-a-code-block.md)
            ```
            """)
        let problems = Dictionary(uniqueKeysWithValues: file.links.map { ($0.text, $0.problem) })
        #expect(problems.count == 5, "\(problems)")
        #expect(problems["a"] == .some(nil))
        #expect(problems["b"]??.hasPrefix("no section #gone in contrib/docs/example.md") == true)
        #expect(problems["c"]??.hasPrefix("no section #the-settings-table-that-is-not") == true)
        #expect(problems["d"] == "no file contrib/docs/missing.md")
        #expect(problems["e"] == .some(nil))
    }
}
