import Foundation
import NotifySocket
import NotifyTestSupport
import Testing

/// The Debian maintainer scripts under a `policy-rc.d` that forbids services, as in a
/// container or an image build: they leave running sessions alone, and say so in one line
/// with the command each user runs, instead of leaving a socket unstarted or an old binary
/// running unnoticed. Run as dpkg runs them, with the user-manager function put in as
/// build-deb.sh puts it, against a stand-in for `systemctl`, `setpriv` and `policy-rc.d`
/// and a user runtime directory with a manager's socket in it.
@Suite struct DebianPolicyTests {
    struct Machine {
        let directory: ScratchDirectory
        /// The listening socket that stands for a running user manager.
        let manager: Int32

        init(policy: Int32, sessions: Int) throws {
            directory = try ScratchDirectory()
            try FileManager.default.createDirectory(atPath: directory.file("bin"), withIntermediateDirectories: true)
            let tools = [
                "policy-rc.d": "#!/bin/sh\nexit \(policy)\n",
                "systemctl": "#!/bin/sh\nexit 0\n",
                "deb-systemd-helper": "#!/bin/sh\nexit 0\n",
                "setpriv": "#!/bin/sh\necho \"$*\" >> \"\(directory.file("setpriv-calls"))\"\n",
            ]
            for (name, script) in tools {
                try writeFileClosingOnExec(directory.file("bin/" + name), script, mode: 0o755)
            }
            for script in ["postinst", "prerm", "postrm"] {
                let text = try String(contentsOfFile: Contrib.path("debian/" + script), encoding: .utf8)
                let function = try String(contentsOfFile: Contrib.path("debian/user-managers.sh"), encoding: .utf8)
                try writeFileClosingOnExec(directory.file(script), text.replacingOccurrences(of: "#USER_MANAGERS#\n", with: function), mode: 0o755)
            }
            try FileManager.default.createDirectory(atPath: directory.file("run/1000/systemd"), withIntermediateDirectories: true)
            manager = sessions > 0 ? try UnixSocket.listen(path: directory.file("run/1000/systemd/private")) : -1
        }

        func run(_ script: String, _ arguments: [String]) async throws -> (status: Int32, output: String, error: String) {
            try await runCaptured("/bin/sh", [directory.file(script)] + arguments, environment: [
                "PATH": directory.file("bin") + ":/usr/bin:/bin", "NOTIFYD_USER_RUNTIME_ROOT": directory.file("run"),
            ])
        }

        var setprivCalls: String { (try? String(contentsOfFile: directory.file("setpriv-calls"), encoding: .utf8)) ?? "" }

        func remove() {
            if manager >= 0 { close(manager) }
            directory.remove()
        }
    }

    @Test func aForbiddingPolicyLeavesSessionsAloneAndSaysWhatWasNotDoneAndTheCommand() async throws {
        let machine = try Machine(policy: 101, sessions: 1)
        defer { machine.remove() }
        let cases: [(script: String, arguments: [String], said: String)] = [
            ("postinst", ["configure"], "notifyd: policy-rc.d forbids it, so notifyd.socket was not started in 1 running user session(s); each user there runs: systemctl --user start notifyd.socket\n"),
            ("postinst", ["configure", "0.1.0"], "notifyd: policy-rc.d forbids it, so notifyd was not restarted on the new binary in 1 running user session(s); each user there runs: systemctl --user daemon-reload && systemctl --user try-restart notifyd.service\n"),
            ("prerm", ["remove"], "notifyd: policy-rc.d forbids it, so notifyd was not stopped in 1 running user session(s); each user there runs: systemctl --user stop notifyd.socket notifyd.service\n"),
            ("postrm", ["remove"], ""),
        ]
        for (script, arguments, said) in cases {
            let ran = try await machine.run(script, arguments)
            #expect(ran.status == 0, "\(script) \(arguments): \(ran.error)")
            #expect(ran.output == said, "\(script) \(arguments): \(ran.output)")
        }
        #expect(machine.setprivCalls.isEmpty, "no session was entered: \(machine.setprivCalls)")
    }

    @Test func aPolicyThatAllowsItOrNoSessionSaysNothing() async throws {
        let allowing = try Machine(policy: 0, sessions: 1)
        defer { allowing.remove() }
        let upgrade = try await allowing.run("postinst", ["configure", "0.1.0"])
        #expect(upgrade.status == 0 && upgrade.output.isEmpty, "\(upgrade.output)\(upgrade.error)")
        #expect(allowing.setprivCalls.components(separatedBy: "--reuid=").count == 2, "the one session was entered: \(allowing.setprivCalls)")

        let empty = try Machine(policy: 101, sessions: 0)
        defer { empty.remove() }
        let install = try await empty.run("postinst", ["configure"])
        #expect(install.status == 0 && install.output.isEmpty, "nothing was left undone: \(install.output)")
    }
}
