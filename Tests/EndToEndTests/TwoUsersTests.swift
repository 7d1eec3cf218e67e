import Foundation
import NotifyTestSupport
import Testing

/// contrib/docs/dev-backend.md's "Two users on one machine": beside the first notifyd, a second with its
/// own --socket, --state-dir and --config, both against one dev backend, and the users'
/// messages reach each other's device; the second never writes into the first's log.
@Suite struct TwoUsersTests {
    @Test func twoNotifydsOnOneMachineSendToEachOther() async throws {
        let backend = try CommandLineTests.backend()
        defer { backend.stop() }
        let url = backend.baseURL.absoluteString
        // One home, whose config (alice's) names a log file; bob's notifyd has a config of
        // its own, as the recipe says. DaemonUnderTest gives each its own socket and state.
        let home = try ScratchDirectory()
        defer { home.remove() }
        try FileManager.default.createDirectory(atPath: home.file(".config/notifyd"), withIntermediateDirectories: true)
        try Data("log_file = ~/alice.log\n".utf8).write(to: URL(fileURLWithPath: home.file(".config/notifyd/config")))
        try Data().write(to: URL(fileURLWithPath: home.file("bob-config")))
        let environment = ["HOME": home.path, "XDG_CONFIG_HOME": ""]
        let alice = try await DaemonUnderTest(backend: url, environment: environment)
        let bob = try await DaemonUnderTest(backend: url, extraArguments: ["--config", home.file("bob-config")], environment: environment)
        var ids: [String: String] = [:]
        for (user, daemon, token) in [("alice", alice, "3f2a1b9c5d7e8f00"), ("bob", bob, "0a0b0c0d0e0f1011")] {
            let login = try await daemon.notifyctl(["login", "--password-stdin", user], stdin: Data("\(user)\n".utf8))
            #expect(login.status == 0, "\(user): \(login.error)")
            let token = try await daemon.notifyctl(["set-token", token])
            #expect(token.status == 0, "\(user): \(token.error)")
            let status = try await daemon.notifyctl(["--json", "status"])
            let object = try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any]
            ids[user] = (object?["registration"] as? [String: Any])?["id"] as? String
        }
        #expect(ids["alice"] != nil && ids["bob"] != nil && ids["alice"] != ids["bob"], "two registrations: \(ids)")

        #expect(try await bob.notifyctl(["send", "--to", "alice", "--wait", "hello from bob"]).status == 0)
        #expect(try await alice.notifyctl(["send", "--to", "bob", "--wait", "hello from alice"]).status == 0)
        let pushes = backend.pushes()
        #expect(pushes.map(\.displayedText) == ["From bob: hello from bob", "From alice: hello from alice"], "\(pushes)")
        #expect(pushes.map(\.recipients) == [[ids["alice"] ?? "?"], [ids["bob"] ?? "?"]], "each message reaches the other's device")
        await alice.cleanUp()
        await bob.cleanUp()
        let log = (try? String(contentsOfFile: home.file("alice.log"), encoding: .utf8)) ?? ""
        #expect(log.contains("notifyd[\(alice.child.pid)]") && !log.contains("notifyd[\(bob.child.pid)]"), "alice's log is alice's own: \(log.prefix(300))")
    }
}
