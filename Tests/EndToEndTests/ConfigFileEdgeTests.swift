import Foundation
import NotifyTestSupport
import Testing

/// Two config files a person writes without meaning anything odd: `/dev/null`, for no
/// settings from any file (as `ssh -F /dev/null`), and a file that gives a key twice, where
/// the last line wins but the earlier one, edited in vain, is named.
@Suite struct ConfigFileEdgeTests {
    @Test func devNullIsAnEmptyConfigForTheStartTheCheckAndAReload() async throws {
        let check = try await run(BuiltProducts.path("notifyd"), ["--config", "/dev/null", "--check-config"], seconds: 10)
        #expect(check.status == 0, "\(check.error)")
        #expect(check.output.hasPrefix("config file: /dev/null (empty; defaults apply)\n"), "\(check.output)")
        #expect(check.output.contains("settings OK"), "\(check.output)")
        let daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--config", "/dev/null"])
        #expect(try await daemon.notifyctl(["ping"]).status == 0, "\(daemon.child.standardError)")
        let reload = try await daemon.notifyctl(["reload"])
        #expect(reload.status == 0 && reload.output.hasPrefix("Reloaded /dev/null: nothing changed"), "\(reload.output)\(reload.error)")
        await daemon.cleanUp()
    }

    @Test func aKeyGivenTwiceIsAWarningNamingBothLinesAndTheLastWins() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        try Data("backend = http://127.0.0.1:1\nlog_level = info\n# later\nbackend = http://127.0.0.1:2\n".utf8).write(to: URL(fileURLWithPath: config))
        let warning = "\(config):4: backend is given again (first on line 1); this line's value is the one used"

        let check = try await run(BuiltProducts.path("notifyd"), ["--config", config, "--check-config"], seconds: 10)
        #expect(check.status == 0, "a warning, not a problem: \(check.error)")
        #expect(check.error == "notifyd: warning: \(warning)\n", "\(check.error)")
        #expect(check.output.contains("backend = http://127.0.0.1:2 (from \(config):4)"), "\(check.output)")

        let daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--config", config], logLevelFlag: false)
        #expect(await eventually { daemon.child.standardError.contains(warning) }, "\(daemon.child.standardError)")
        let reload = try await daemon.notifyctl(["reload"])
        #expect(reload.status == 0 && reload.error == "notifyctl: warning: \(warning)\n", "\(reload.error)")
        await daemon.cleanUp()

        // Once each key is given once, nothing is said.
        try Data("backend = http://127.0.0.1:2\nlog_level = info\n".utf8).write(to: URL(fileURLWithPath: config))
        let clean = try await run(BuiltProducts.path("notifyd"), ["--config", config, "--check-config"], seconds: 10)
        #expect(clean.status == 0 && clean.error.isEmpty, "\(clean.error)")
    }
}
