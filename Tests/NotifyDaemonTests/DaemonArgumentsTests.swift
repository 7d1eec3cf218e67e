@testable import NotifyDaemon
import Testing

/// notifyd's command line, read in-process: every flag, its forms and its errors.
struct DaemonArgumentsTests {
    @Test func settingFlagsBecomeSettingsInTheirOrder() throws {
        let parsed = try DaemonArguments.parse(["--backend", "https://b.example", "--retry-min=2s", "--log-level", "debug", "--retry-min", "3s"])
        #expect(parsed.action == .run)
        #expect(parsed.settings == [
            SettingValue(key: "backend", value: "https://b.example", origin: "--backend"),
            SettingValue(key: "retry_min", value: "2s", origin: "--retry-min"),
            SettingValue(key: "log_level", value: "debug", origin: "--log-level"),
            SettingValue(key: "retry_min", value: "3s", origin: "--retry-min"),
        ])
    }

    /// Every setting that has a flag is reached by it, with a value or as a switch.
    @Test func everySettingFlagIsRead() throws {
        for key in SettingKey.all {
            guard let flag = key.flag else { continue }
            let parsed = try DaemonArguments.parse(key.flagValue == nil ? [flag] : [flag, "x"])
            #expect(parsed.settings == [SettingValue(key: key.name, value: key.flagValue == nil ? "true" : "x", origin: flag)], "\(flag)")
        }
    }

    @Test func aSwitchIsTrueAloneAndTakesAnInlineValue() throws {
        #expect(try DaemonArguments.parse(["--allow-insecure-http"]).settings.map(\.value) == ["true"])
        #expect(try DaemonArguments.parse(["--allow-insecure-http=false"]).settings.map(\.value) == ["false"])
        // A switch never takes the next argument as its value.
        #expect(throws: DaemonArguments.UsageError(message: "unknown option 'false'")) {
            try DaemonArguments.parse(["--allow-insecure-http", "false"])
        }
    }

    @Test func theOtherFlags() throws {
        let parsed = try DaemonArguments.parse(["--socket", "/s", "--config=/c", "--check-config", "--allow-core-dumps"])
        #expect(parsed.socket == "/s" && parsed.configFile == "/c" && parsed.allowCoreDumps && parsed.action == .checkConfig)
        #expect(parsed.settings.isEmpty)
    }

    /// `--help` and `--version` answer whatever follows them, as most programs do.
    @Test func helpAndVersionEndTheReading() throws {
        #expect(try DaemonArguments.parse(["--help", "--bogus"]).action == .help)
        #expect(try DaemonArguments.parse(["-h"]).action == .help)
        #expect(try DaemonArguments.parse(["--backend", "x", "--version", "--socket"]).action == .version)
    }

    @Test func mistakesAreUsageErrorsThatSayWhat() {
        #expect(throws: DaemonArguments.UsageError(message: "unknown option '--bakend'")) { try DaemonArguments.parse(["--bakend", "x"]) }
        #expect(throws: DaemonArguments.UsageError(message: "--backend needs a value")) { try DaemonArguments.parse(["--backend"]) }
        #expect(throws: DaemonArguments.UsageError(message: "--socket needs a value")) { try DaemonArguments.parse(["--socket"]) }
        #expect(throws: DaemonArguments.UsageError(message: "unknown option 'stray'")) { try DaemonArguments.parse(["stray"]) }
    }

    /// The usage names every flag the parser reads, each setting's with its default, and
    /// every key.
    @Test func theUsageIsMadeFromTheSettings() throws {
        let usage = DaemonArguments.usage
        // As read, whatever the wrapping.
        let words = usage.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for key in SettingKey.all {
            #expect(usage.contains(key.name), "\(key.name) among the keys")
            guard let flag = key.flag else { continue }
            let line = usage.split(separator: "\n").first { $0.hasPrefix("  " + flag + " ") }
            #expect(line != nil, "\(flag) has a line")
            #expect(words.contains("(default \(key.defaultText))"), "\(flag)'s default")
        }
        for flag in ["--socket", "--config", "--check-config", "--allow-core-dumps", "--version", "--help"] {
            #expect(usage.contains("  " + flag + " "), "\(flag)")
        }
        #expect(!usage.split(separator: "\n").contains { $0.count > 92 && !$0.hasPrefix("Keys:") }, "no line wider than 92 columns")
    }
}
