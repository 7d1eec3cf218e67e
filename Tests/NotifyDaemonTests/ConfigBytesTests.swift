import Foundation
import NotifyCore
import NotifyDaemon
import NotifyTestSupport
import Testing

/// The config file as bytes: what is not UTF-8, control characters, line ends, its size.
@Suite struct ConfigBytesTests {
    static let path = SettingsTests.path

    static func resolve(_ bytes: [UInt8]) -> (ResolvedSettings, [String]) {
        let (settings, problems) = ResolvedSettings.resolve(flags: [], configFlag: nil, environment: SettingsTests.home) { _ throws(FileContents.Problem) in
            Data(bytes)
        }
        return (settings, problems.map(\.description))
    }

    /// One byte that is not UTF-8, even in a comment, names its line and the byte; the
    /// other lines are still read.
    @Test(arguments: [
        ([0xFF], "byte 0xff (column 4) is not UTF-8"),
        ([0xC3], "byte 0xc3 (column 4) is not UTF-8"),          // a sequence cut short
        ([0xC0, 0xAF], "byte 0xc0 (column 4) is not UTF-8"),    // an overlong '/'
        ([0xED, 0xA0, 0x80], "byte 0xed (column 4) is not UTF-8"), // a surrogate
        ([0x80], "byte 0x80 (column 4) is not UTF-8"),          // a continuation byte alone
    ] as [([UInt8], String)])
    func aLineThatIsNotUTF8IsNamedWithItsByte(bad: [UInt8], message: String) {
        let file = Array("backend = https://b.example\n# é".utf8) + bad + Array(" comment\nlog_level = debug\n".utf8)
        let (settings, problems) = Self.resolve(file)
        #expect(problems == ["\(Self.path):2: \(message); the config file must be UTF-8 text"])
        #expect(settings.runtime.backend == "https://b.example")
        #expect(settings.runtime.logLevel == .debug)
    }

    /// A NUL, an escape sequence or a right-to-left override in the file reaches an error
    /// escaped, never as itself.
    @Test func controlCharactersInAnErrorAreEscaped() {
        let file = Array("words\u{0}and\u{1B}[31mred\n log_level = \"lo\u{7}ud\u{202E}\"\nkey\u{85} = 1\n".utf8)
        let (_, problems) = Self.resolve(file)
        #expect(problems == [
            "\(Self.path):1: expected `key = value`, found 'words\\u0000and\\u001B[31mred'",
            "\(Self.path):2: log_level: must be error, warning, notice, info or debug, not 'lo\\u0007ud\\u202E'",
            "\(Self.path):3: key\\u0085: unknown setting (known: \(ResolvedSettings.keyNames.joined(separator: ", ")))",
        ])
    }

    @Test func checkConfigShowsValuesWithTheirControlCharactersEscaped() {
        let (settings, problems) = Self.resolve(Array("password_command = \"pass\tshow\u{1B}]0;x\u{7}\"\n".utf8))
        #expect(problems.isEmpty)
        #expect(settings.summary(environment: SettingsTests.home).contains("password_command = pass\\tshow\\u001B]0;x\\u0007 (from \(Self.path):1)"))
    }

    /// Windows line ends: CR LF is two line ends' worth of bytes, not one character that
    /// hides every line after the first.
    @Test func linesMayEndWithCRLF() {
        let (settings, problems) = Self.resolve(Array("backend = https://b.example\r\nlog_level = info\r\n# done\r\n".utf8))
        #expect(problems.isEmpty)
        #expect(settings.runtime.backend == "https://b.example")
        #expect(settings.runtime.logLevel == .info)
        #expect(settings.origins["log_level"] == Self.path + ":2")
    }

    /// A config file that is there but cannot be read stops the start, named or not: the
    /// settings in it would silently not apply. (Not as root, who reads any file.)
    @Test(.enabled(if: getuid() != 0, "root reads a file whatever its mode"))
    func aDefaultConfigFileThatCannotBeReadIsAProblem() throws {
        let home = try ScratchDirectory()
        defer { home.remove() }
        let config = home.file(".config/notifyd/config")
        try FileManager.default.createDirectory(atPath: home.file(".config/notifyd"), withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: config, contents: Data("backend = https://b.example\n".utf8), attributes: [.posixPermissions: 0o000]))
        let (_, problems) = ResolvedSettings.resolve(flags: [], configFlag: nil, environment: ["HOME": home.path])
        #expect(problems.map(\.description) == ["\(config): the config file cannot be read: Permission denied"])
    }

    /// Larger than any config file: refused before a byte of it is read (a sparse file of
    /// 200 MB costs nothing to make, and would cost its size to read).
    @Test func aHugeConfigFileIsRefusedUnread() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        #expect(FileManager.default.createFile(atPath: config, contents: Data("backend = https://b.example\n".utf8)))
        #expect(truncate(config, 200 << 20) == 0)
        let (settings, problems) = ResolvedSettings.resolve(flags: [], configFlag: config, environment: SettingsTests.home)
        #expect(problems.map(\.description) == ["\(config): the config file cannot be read: it is larger than 1 MiB, more than notifyd reads"])
        #expect(settings.runtime.backend == nil)
    }
}
