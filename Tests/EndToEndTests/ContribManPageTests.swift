import Foundation
import NotifyTestSupport
import Testing

/// contrib/man/notifyd.1, notifyctl.1 and notify-devbackend.1: they render without a
/// warning, and they document every option and command that the built programs' --help
/// names.
@Suite struct ContribManPageTests {
    static let pages = ["notifyd.1", "notifyctl.1", "notify-devbackend.1"]

    /// The page's source with the roff escapes that hide option names undone:
    /// `\-` is a hyphen, `\fB` and friends change fonts, `\&` is nothing.
    static func plainSource(_ page: String) throws -> String {
        var text = try Contrib.read("man/\(page)")
        text = text.replacingOccurrences(of: "\\-", with: "-")
        text = text.replacingOccurrences(of: "\\&", with: "")
        text = text.replacing(/\\f(\[[A-Z]*\]|[A-Z])/, with: "")
        return text
    }

    /// The text of one `.SH NAME` section (up to the next `.SH`).
    static func section(_ name: String, of text: String) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var inside = false
        var result: [Substring] = []
        for line in lines {
            if line.hasPrefix(".SH") {
                if inside { break }
                inside = line.dropFirst(3).trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) == name
                continue
            }
            if inside { result.append(line) }
        }
        return result.joined(separator: "\n")
    }

    static func mentions(_ option: String, in text: String) -> Bool {
        // The whole option, not a longer one that starts with it.
        text.contains(try! Regex("(^|[^a-z0-9-])\(option)($|[^a-z0-9-])").anchorsMatchLineEndings())
    }

    @Test(.enabled(if: ContribTool.man.shouldRun, "needs man (Debian package man-db)"), arguments: pages)
    func pageRendersWithoutWarnings(_ page: String) async throws {
        let man = try ContribTool.man.require()
        #if os(Linux)
        // man-db: pass groff's -ww so that every warning category is reported.
        let arguments = ["--warnings=w", "-l", Contrib.path("man/\(page)")]
        #else
        let arguments = ["-l", Contrib.path("man/\(page)")]
        #endif
        let result = try await runCaptured(man, arguments, environment: ["MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat"])
        #expect(result.status == 0)
        #expect(result.error.isEmpty, "man -l \(page): \(result.error)")
        #expect(result.output.contains("NAME") && result.output.contains("SYNOPSIS") && result.output.contains("EXAMPLES"))
    }

    @Test(.enabled(if: ContribTool.groff.shouldRun, "needs groff (Debian package groff-base)"), arguments: pages)
    func pagePassesGroffWithAllWarnings(_ page: String) async throws {
        let groff = try ContribTool.groff.require()
        let result = try await runCaptured(groff, ["-ww", "-z", "-man", Contrib.path("man/\(page)")])
        #expect(result.status == 0)
        #expect(result.error.isEmpty, "groff -ww: \(result.error)")
    }

    @Test(arguments: pages)
    func pageHasTheUsualSections(_ page: String) throws {
        let text = try Self.plainSource(page)
        var sections = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES", "SEE ALSO"]
        switch page {
        case "notifyd.1": sections += ["ENVIRONMENT", "FILES", "CONFIGURATION"]
        case "notifyctl.1": sections += ["ENVIRONMENT", "FILES", "COMMANDS"]
        default: sections += ["ROUTES"]  // the dev backend keeps no files and reads no environment
        }
        for name in sections {
            #expect(text.contains("\n.SH \(name)\n") || text.contains("\n.SH \"\(name)\"\n"), "\(page) has no \(name) section")
        }
    }

    @Test func notifydPageDocumentsEveryOptionOfItsHelp() async throws {
        let options = ContribHelp.longOptions(in: try await ContribHelp.notifyd())
        #expect(options.contains("--socket"), "could not read the options from notifyd --help")
        let text = try Self.plainSource("notifyd.1")
        let optionsSection = Self.section("OPTIONS", of: text)
        for option in options.sorted() {
            #expect(Self.mentions(option, in: optionsSection), "notifyd.1 OPTIONS does not describe \(option), which notifyd --help names")
            #expect(Self.mentions(option, in: Self.section("SYNOPSIS", of: text)), "notifyd.1 SYNOPSIS lacks \(option)")
        }
    }

    @Test func devBackendPageDocumentsEveryOptionOfItsHelp() async throws {
        let help = try await runCaptured(BuiltProducts.path("notify-devbackend"), ["--help"])
        let options = ContribHelp.longOptions(in: help.output)
        #expect(options.contains("--gone-status"), "could not read the options from notify-devbackend --help")
        let text = try Self.plainSource("notify-devbackend.1")
        for option in options.sorted() {
            #expect(Self.mentions(option, in: Self.section("OPTIONS", of: text)), "notify-devbackend.1 OPTIONS does not describe \(option)")
            #expect(Self.mentions(option, in: Self.section("SYNOPSIS", of: text)), "notify-devbackend.1 SYNOPSIS lacks \(option)")
        }
    }

    @Test func notifyctlPageDocumentsEveryCommandAndOptionOfItsHelp() async throws {
        let text = try Self.plainSource("notifyctl.1")
        let commandsSection = Self.section("COMMANDS", of: text)
        let globalOptions = try await ContribHelp.notifyctlGlobalOptions()
        for option in globalOptions.sorted() {
            #expect(Self.mentions(option, in: Self.section("OPTIONS", of: text)), "notifyctl.1 OPTIONS does not describe \(option)")
        }
        for (command, options) in try await ContribHelp.notifyctlCommands() {
            // Each command is the tag of an entry: `.B name [options...]`.
            let entry = try Regex("(^|\\n)\\.B \(command)( |\\n)")
            #expect(commandsSection.contains(entry), "notifyctl.1 COMMANDS has no entry for \(command)")
            for option in options.subtracting(globalOptions).sorted() {
                #expect(Self.mentions(option, in: commandsSection), "notifyctl.1 does not describe \(command) \(option)")
            }
        }
    }

    @Test func notifyctlPageListsTheExitCodes() throws {
        let status = Self.section("EXIT STATUS", of: try Self.plainSource("notifyctl.1"))
        for code in 0...4 {
            #expect(status.contains("\n.B \(code)\n"), "notifyctl.1 EXIT STATUS lacks \(code)")
        }
    }

    @Test func notifydPageListsEveryConfigurationKey() async throws {
        let configuration = Self.section("CONFIGURATION", of: try Self.plainSource("notifyd.1"))
        // The keys as the code knows them: `notifyd --help` lists them after "Keys:".
        let help = try await run(BuiltProducts.path("notifyd"), ["--help"]).output
        let keysLine = try #require(help.split(separator: "\n").first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("Keys:") })
        let keys = keysLine.trimmingCharacters(in: .whitespaces).dropFirst("Keys:".count)
            .split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " .")) }
        #expect(keys.contains("password_command"))
        for key in keys {
            #expect(configuration.contains("\n.B \(key)\n"), "notifyd.1 CONFIGURATION lacks the key \(key)")
        }
    }
}
