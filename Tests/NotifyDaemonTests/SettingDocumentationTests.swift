import Foundation
import NotifyCore
@testable import NotifyDaemon
import Testing

/// Each setting's default is written once as a typed value (`RuntimeSettings`) and once
/// as text (`SettingKey.defaultText`, from which `--help` and `--check-config` are made):
/// the two must mean the same, and the settings table (contrib/docs/settings.md, linked
/// from the README) and notifyd.1 must say what the code says.
struct SettingDocumentationTests {
    /// Defaults that are not a value the key takes: nothing set, or a place.
    static let notValues: Set<String> = ["backend", "log_file", "password_command", "state_dir"]

    @Test func eachDefaultTextReadsAsTheTypedDefault() throws {
        for key in SettingKey.all where !Self.notValues.contains(key.name) {
            var settings = ResolvedSettings(configPath: "/none")
            try key.apply(&settings, key.defaultText)
            #expect(settings.runtime == ResolvedSettings(configPath: "/none").runtime, "\(key.name): \(key.defaultText) is not the default in effect")
        }
    }

    /// The settings table, row by row: the keys, their flags and their defaults.
    @Test func theReadmeTableSaysWhatTheCodeSays() throws {
        let readme = try String(contentsOf: Self.repository.appendingPathComponent("contrib/docs/settings.md"), encoding: .utf8)
        var documented: [String: (flag: String, defaultText: String)] = [:]
        for row in readme.split(separator: "\n") where row.hasPrefix("| `") {
            let cells = row.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 4 else { continue }
            let names = cells[1].split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " `")) }
            let flags = cells[2].split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " `")) }
            let defaults = cells[3].split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " `")) }
            for (index, name) in names.enumerated() where SettingKey.named(name) != nil {
                documented[name] = (flags.indices.contains(index) ? flags[index] : "", defaults.indices.contains(index) ? defaults[index] : defaults.last ?? "")
            }
        }
        for key in SettingKey.all {
            guard let row = documented[key.name] else {
                Issue.record("contrib/docs/settings.md's table lacks \(key.name)")
                continue
            }
            #expect(row.defaultText == key.defaultText, "\(key.name): the settings table says \(row.defaultText), the code \(key.defaultText)")
            let flag = key.flagUsage ?? ""
            #expect(row.flag == flag, "\(key.name): the settings table says flag '\(row.flag)', the code '\(flag)'")
        }
    }

    /// notifyd.1 describes each key with its default: in its CONFIGURATION entry, or in
    /// the OPTIONS entry of the flag that entry refers to ("As --retry-min").
    @Test func theManPageGivesEachDefault() throws {
        let page = try String(contentsOf: Self.repository.appendingPathComponent("contrib/man/notifyd.1"), encoding: .utf8)
        func plain(_ roff: String) -> String {
            roff.replacingOccurrences(of: "\\-", with: "-").replacingOccurrences(of: "\\(ti", with: "~")
                .split(separator: "\n").map { line in
                    var line = String(line)
                    for macro in [".BR ", ".BI ", ".IR ", ".B ", ".I "] where line.hasPrefix(macro) { line = String(line.dropFirst(macro.count)) }
                    return line.replacingOccurrences(of: "\"", with: "")
                }.joined(separator: " ")
        }
        /// The entry that `.TP` then `.B name` (or `.BI name …`) starts, up to the next `.TP` or section.
        func entry(_ name: String) -> String? {
            let lines = page.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard let start = lines.indices.first(where: { index in
                index > 0 && lines[index - 1] == ".TP" && (lines[index] == ".B \(name)" || lines[index].hasPrefix(".BI \(name) ") || lines[index].hasPrefix(".B \(name) "))
            }) else { return nil }
            let end = lines[(start + 1)...].firstIndex { $0 == ".TP" || $0.hasPrefix(".SH") } ?? lines.count
            return plain(lines[start..<end].joined(separator: "\n"))
        }
        for key in SettingKey.all where key.defaultText != "none" {
            guard var text = entry(key.name) else {
                Issue.record("notifyd.1 has no entry for \(key.name)")
                continue
            }
            if let flag = key.flag, text.contains("As \(flag)"), let option = entry(flag.replacingOccurrences(of: "-", with: "\\-")) {
                text += " " + option
            }
            #expect(text.contains(key.defaultText), "notifyd.1 does not give \(key.name)'s default, \(key.defaultText): \(text)")
        }
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}
