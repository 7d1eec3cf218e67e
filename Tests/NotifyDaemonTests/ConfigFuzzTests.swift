import Foundation
import NotifyCore
import NotifyDaemon
import NotifyTestSupport
import Testing
import NotifySystem

/// 5,000 generated config files, from a fixed seed: random bytes, invalid UTF-8 of every
/// kind, control and format characters, CR, quotes, `#`, `=` and the real keys with good
/// and bad values. Each must be read without a crash, and every problem must name a line
/// of the file and carry no control character as itself; a line is reported as not UTF-8
/// exactly when it is not.
@Suite struct ConfigFuzzTests {
    static let seed: UInt64 = 0x636F_6E66_6967_2166
    static let fileCount = 5_000
    static let path = SettingsTests.path

    @Test func generatedConfigFilesAreReadOrTheirProblemsNameALine() async throws {
        let failures = try await offThePool(Self.run)
        #expect(failures.isEmpty, "\(failures.count) failures (seed \(Self.seed)), first: \(failures.prefix(5).joined(separator: "\n"))")
    }

    /// Every generated file read as notifyd reads its config: what went wrong, if anything.
    @Sendable static func run() -> [String] {
        var random = SplitMix64(seed: Self.seed)
        var failures: [String] = []
        for number in 0..<Self.fileCount {
            let bytes = Self.file(&random)
            let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
            let (_, problems) = ResolvedSettings.resolve(flags: [], configFlag: nil, environment: SettingsTests.home) { _ throws(FileContents.Problem) in
                Data(bytes)
            }
            let notUTF8 = Set(lines.indices.filter { String(validating: lines[$0], as: UTF8.self) == nil }.map { $0 + 1 })
            var reportedNotUTF8: Set<Int> = []
            for problem in problems {
                let text = problem.description
                let line = problem.origin.hasPrefix(Self.path + ":") ? Int(problem.origin.dropFirst(Self.path.count + 1)) : nil
                if line.map({ !(1...lines.count).contains($0) }) ?? true {
                    failures.append("file \(number): names no line of the file: \(text.debugDescription)")
                }
                if let raw = text.unicodeScalars.first(where: Self.isControl) {
                    failures.append("file \(number): U+\(String(raw.value, radix: 16)) as itself in \(text.debugDescription)")
                }
                if text.contains("is not UTF-8"), let line { reportedNotUTF8.insert(line) }
            }
            if reportedNotUTF8 != notUTF8 {
                failures.append("file \(number): lines not UTF-8 \(notUTF8.sorted()), reported \(reportedNotUTF8.sorted())")
            }
        }
        return failures
    }

    /// Control characters, the line and paragraph separators, and the bidirectional
    /// formatting characters: what would move the cursor, break a line or reorder it.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: true
        case .format: scalar.properties.isBidiControl
        default: false
        }
    }

    /// Up to 12 lines, each a few pieces, so that most files have both good lines and bad ones.
    static func file(_ random: inout SplitMix64) -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<Int.random(in: 0...12, using: &random) {
            for _ in 0..<Int.random(in: 0...6, using: &random) { bytes += piece(&random) }
            bytes += Bool.random(using: &random) ? [0x0A] : [0x0D, 0x0A]
        }
        // Half the files end without a final line end.
        if Bool.random(using: &random) { bytes += piece(&random) }
        return bytes
    }

    static let keys = ResolvedSettings.keyNames + ["colour", "", "BACKEND", "log level"]
    static let values = ["https://b.example", "http://10.0.0.1", "ftp://x", "5s", "30m", "-1", "99999999999999999999", "fcm", "apns,wns",
                         "1s", "none", "true", "maybe", "/var/log/n.log", "relative", "debug", "\"quoted # value\"", "\"unterminated", "\"\""]
    static let invalidUTF8: [[UInt8]] = [[0xFF], [0xFE], [0x80], [0xBF], [0xC0, 0xAF], [0xC1, 0x81], [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80],
                                         [0xF4, 0x90, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xF0, 0x9F, 0x98]]
    static let awkward = ["\u{0}", "\u{7}", "\u{1B}[2J", "\u{1B}]0;title\u{7}", "\t", "\r", "\u{7F}", "\u{85}", "\u{200E}", "\u{202E}",
                          "\u{2028}", "\u{FEFF}", "é", "😀", "#", "=", " #", "\"", " ", "="]

    static func piece(_ random: inout SplitMix64) -> [UInt8] {
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return Array("\(keys.randomElement(using: &random)!) = \(values.randomElement(using: &random)!)".utf8)
        case 1: return Array(keys.randomElement(using: &random)!.utf8)
        case 2: return Array(values.randomElement(using: &random)!.utf8)
        case 3: return invalidUTF8.randomElement(using: &random)!
        case 4: return Array(awkward.randomElement(using: &random)!.utf8)
        case 5: return (0..<Int.random(in: 1...8, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        case 6: return (0..<Int.random(in: 1...8, using: &random)).map { _ in UInt8.random(in: 0x20...0x7E, using: &random) }
        default: return Array("# a comment ".utf8)
        }
    }
}
