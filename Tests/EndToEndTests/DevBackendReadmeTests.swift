import Foundation
import NotifyTestSupport
import Testing

/// The README's "No backend yet? Use the dev backend as yours", as a newcomer follows it:
/// install.sh takes the option the block gives it; the built notify-devbackend starts with
/// the block's options (on a free port: 8080 may be taken here); the block's config line,
/// run in a fresh home, gives a config that notifyd accepts, its plain-http loopback URL
/// included; and the commands the README names after it log alice in with the password
/// alice, register, and send the push the README quotes.
@Suite struct DevBackendReadmeTests {
    static func block() throws -> [String] {
        let readme = try String(contentsOf: Contrib.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let found = try #require(readme.firstMatch(of: /<!-- devbackend:[^\n]*-->\n```sh\n((?s).*?)```/), "README.md has its dev backend block")
        return found.output.1.split(separator: "\n").map { String($0.split(separator: "#").first ?? "").trimmingCharacters(in: .whitespaces) }
    }

    @Test func theDevBackendBlockWorksAsWritten() async throws {
        let lines = try Self.block()
        try #require(lines.count == 3, "\(lines)")

        let install = lines[0].split(separator: " ").map(String.init)
        #expect(install.first == "contrib/install.sh", "\(lines[0])")
        let help = try await runCaptured("/bin/sh", [Contrib.path("install.sh"), "--help"])
        for option in install.dropFirst() {
            #expect(ContribHelp.longOptions(in: help.output).contains(option), "install.sh --help has no \(option)")
        }

        var devbackend = lines[1].split(separator: " ").map(String.init).filter { $0 != "&" }
        #expect(devbackend.first == "notify-devbackend", "\(lines[1])")
        let port = try #require(devbackend.firstIndex(of: "--port").map { devbackend[$0 + 1] }, "\(lines[1])")
        devbackend[devbackend.firstIndex(of: "--port")! + 1] = "0"
        let backend = try await SpawnedProcess.start(BuiltProducts.path("notify-devbackend"), Array(devbackend.dropFirst()))
        let listening = try #require(await backend.outputLines(atLeast: 1).first, "notify-devbackend started: \(backend.standardError)")
        let url = try #require(listening.firstMatch(of: /listening on (http:\S+)/)?.output.1, "\(listening)")
        defer { backend.signal(SIGTERM) }

        let home = try ScratchDirectory()
        defer { home.remove() }
        let environment = ["HOME": home.path, "XDG_CONFIG_HOME": ""]
        // As on a desktop whose umask lets the user's group write: the config it makes is
        // still one notifyd takes (nobody else may change a file that names a command).
        let written = try await runCaptured("/bin/sh", ["-c", "umask 002; " + lines[2]], environment: environment)
        #expect(written.status == 0, "\(lines[2]): \(written.error)")
        let config = home.file(".config/notifyd/config")
        let text = try String(contentsOfFile: config, encoding: .utf8)
        #expect(text == "backend = http://127.0.0.1:\(port)\n", "\(text)")
        try Data(text.replacingOccurrences(of: "http://127.0.0.1:\(port)", with: String(url)).utf8).write(to: URL(fileURLWithPath: config))

        let daemon = try await DaemonUnderTest(backend: nil, environment: environment)
        let reload = try await daemon.notifyctl(["reload"])
        #expect(reload.status == 0, "\(reload.output)\(reload.error)")
        let login = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice\n".utf8))
        #expect(login.status == 0, "\(login.output)\(login.error)")
        #expect(try await daemon.notifyctl(["set-token", "3f2a1b9c5d7e8f00"]).status == 0)
        #expect(try await daemon.notifyctl(["send", "--to", "alice", "It works"]).status == 0)
        #expect(await eventually { backend.standardOutput.contains("push #1 apns from alice to alice (1 device): ") }, "\(backend.standardOutput)")
        await daemon.cleanUp()
    }
}
