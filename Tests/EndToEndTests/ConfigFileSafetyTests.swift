import Foundation
import NotifyTestSupport
import Testing

/// The built notifyd and a config file someone else could change: it names a
/// password_command that notifyd would run as its user, so notifyd refuses it at start, at
/// `--check-config` and at every reload, as it refuses such a state directory.
@Suite struct ConfigFileSafetyTests {
    static func write(_ text: String, to path: String, mode: mode_t = 0o600) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, mode) == 0)
    }

    @Test func aConfigOthersCanWriteStopsTheStartAndCheckConfig() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        try Self.write("log_level = info\n", to: config, mode: 0o666)
        let arguments = ["--config", config, "--socket", directory.file("s.sock"), "--state-dir", directory.file("state")]
        for extra in [[], ["--check-config"]] {
            let result = try await run(BuiltProducts.path("notifyd"), arguments + extra, seconds: 10)
            #expect(result.status == 78, "\(result.error)")
            #expect(result.error.contains("\(config) is writable by other users (mode 666), who could make notifyd run a command of theirs as you"), "\(result.error)")
            #expect(result.error.contains("`chmod go-w \(config)`"))
        }
        // A directory above it others may write, without the sticky bit, is as bad.
        #expect(chmod(config, 0o600) == 0)
        let shared = directory.file("shared")
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        #expect(chmod(shared, 0o777) == 0)
        try Self.write("log_level = info\n", to: shared + "/config")
        let above = try await run(BuiltProducts.path("notifyd"), ["--config", shared + "/config", "--check-config"], seconds: 10)
        #expect(above.status == 78)
        #expect(above.error.contains("\(shared) is writable by other users (mode 777)"), "\(above.error)")
        // The file and the directories made for it under a umask of 002: all named at once,
        // with one command, not one a run.
        let made = shared + "/notifyd"
        try FileManager.default.createDirectory(atPath: made, withIntermediateDirectories: true)
        #expect(chmod(shared, 0o775) == 0 && chmod(made, 0o775) == 0)
        try Self.write("log_level = info\n", to: made + "/config", mode: 0o664)
        let all = try await run(BuiltProducts.path("notifyd"), ["--config", made + "/config", "--check-config"], seconds: 10)
        #expect(all.status == 78)
        #expect(all.error.contains("\(made)/config (mode 664), \(made) (mode 775) and \(shared) (mode 775) are writable by other users"), "\(all.error)")
        #expect(all.error.contains("run `chmod go-w \(made)/config \(made) \(shared)`"), "\(all.error)")
    }

    /// What was reported: a config made writable by others, a password_command added to it,
    /// and `notifyctl reload` took it; the next login ran the command as notifyd's user.
    @Test func aReloadOfAConfigOthersCanWriteChangesNothingAndRunsNothing() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        try Self.write("log_level = info\n", to: config)
        let daemon = try await DaemonUnderTest(backend: "http://127.0.0.1:9", extraArguments: ["--config", config])
        let planted = directory.file("ran")
        try Self.write("log_level = info\npassword_command = touch \(planted); echo alice\n", to: config, mode: 0o666)
        let reload = try await daemon.notifyctl(["reload"])
        #expect(reload.status == 1, "\(reload.output)\(reload.error)")
        #expect(reload.error.contains("is writable by other users (mode 666)"), "\(reload.error)")
        let status = try await daemon.notifyctl(["status", "--json"])
        #expect(status.output.contains("\"password_source\":\"file\""), "the command was not taken up: \(status.output)")
        _ = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice\n".utf8))
        #expect(!FileManager.default.fileExists(atPath: planted), "the planted command never ran")
        await daemon.cleanUp()
    }

    @Test(.enabled(if: getuid() == 0, "only root can give a file to another user (uid 65534) to test this"))
    func aConfigOwnedByAnotherUserIsRefused() async throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let config = directory.file("config")
        try Self.write("log_level = info\n", to: config, mode: 0o644)
        #expect(chown(config, 65534, 65534) == 0)
        let result = try await run(BuiltProducts.path("notifyd"), ["--config", config, "--check-config"], seconds: 10)
        #expect(result.status == 78)
        #expect(result.error.contains("\(config) belongs to uid 65534"), "\(result.error)")
    }
}
