import Foundation

/// A Markdown file of the repository, with its links and the anchors of its headings as
/// GitHub makes them.
struct MarkdownFile {
    /// The path from the repository's root.
    let relative: String
    let text: String

    init(relative: String, text: String) {
        self.relative = relative
        self.text = text
    }

    init(relative: String) throws {
        self.init(relative: relative, text: try String(contentsOf: Self.url(relative), encoding: .utf8))
    }

    static func url(_ relative: String) -> URL {
        SettingDocumentationTests.repository.appendingPathComponent(relative)
    }

    static func docs() throws -> [MarkdownFile] {
        try FileManager.default.contentsOfDirectory(atPath: url("contrib/docs").path).filter { $0.hasSuffix(".md") }.sorted()
            .map { try MarkdownFile(relative: "contrib/docs/" + $0) }
    }

    static func readmeAndDocs() throws -> [MarkdownFile] {
        [try MarkdownFile(relative: "README.md")] + (try docs())
    }

    /// The text outside fenced code blocks, with inline code taken out: what a reader
    /// sees as prose, where a link is a link.
    var prose: [String] {
        var inFence = false
        return text.split(separator: "\n", omittingEmptySubsequences: false).compactMap { line in
            if line.hasPrefix("```") {
                inFence.toggle()
                return nil
            }
            return inFence ? nil : String(line).replacing(/`[^`]*`/, with: "")
        }
    }

    /// GitHub's anchors: the heading in lower case, without punctuation but `-` and `_`,
    /// spaces made `-`; a second heading of the same text gets `-1`, and so on.
    var anchors: Set<String> {
        var seen: [String: Int] = [:]
        var anchors: Set<String> = []
        var inFence = false
        for line in text.split(separator: "\n") {
            if line.hasPrefix("```") { inFence.toggle() }
            guard !inFence, let match = line.wholeMatch(of: /#{1,6} +(.*)/) else { continue }
            let slug = String(String(match.output.1).lowercased().filter { $0.isLetter || $0.isNumber || $0 == " " || $0 == "-" || $0 == "_" }
                .map { $0 == " " ? "-" : $0 })
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }

    struct Link {
        let text: String
        let target: String
        /// The file it leads to, from the repository's root; nil for a page elsewhere.
        let file: String?
        /// Why it leads nowhere; nil when it leads somewhere.
        let problem: String?
    }

    var links: [Link] {
        prose.flatMap { line in
            line.matches(of: /\[([^\]]*)\]\(([^)\s]+)\)/).map { match in
                resolve(text: String(match.output.1), target: String(match.output.2))
            }
        }
    }

    private func resolve(text: String, target: String) -> Link {
        if target.contains("://") || target.hasPrefix("mailto:") { return Link(text: text, target: target, file: nil, problem: nil) }
        let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let directory = (relative as NSString).deletingLastPathComponent
        let file = parts[0].isEmpty ? relative : ((directory as NSString).appendingPathComponent(parts[0]) as NSString).standardizingPath
        let exists = parts[0].isEmpty || FileManager.default.fileExists(atPath: Self.url(file).path)
        guard exists else { return Link(text: text, target: target, file: file, problem: "no file \(file)") }
        guard parts.count == 2 else { return Link(text: text, target: target, file: file, problem: nil) }
        let anchors = file == relative ? self.anchors : ((try? MarkdownFile(relative: file))?.anchors ?? [])
        let problem = anchors.contains(parts[1]) ? nil : "no section #\(parts[1]) in \(file) (it has: \(anchors.sorted().joined(separator: ", ")))"
        return Link(text: text, target: target, file: file, problem: problem)
    }
}
