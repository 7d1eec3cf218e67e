import Foundation
import Testing
import NotifyTestSupport

/// contrib/examples: the Python client and the socat one-liner, against the built
/// notifyd on a temporary socket.
@Suite struct ContribExampleTests {
    static var client: String { Contrib.path("examples/notifyd_client.py") }
    static var socatPing: String { Contrib.path("examples/socat-ping.sh") }

    /// Runs `body` with a notifyd that has no backend, stopping it afterwards whatever happens.
    static func withDaemon(_ body: (DaemonUnderTest) async throws -> Void) async throws {
        let daemon = try await DaemonUnderTest(backend: nil)
        do {
            try await body(daemon)
            await daemon.cleanUp()
        } catch {
            await daemon.cleanUp()
            throw error
        }
    }

    /// What `notifyd --version` says its version is ("notifyd 0.1.0 (protocol 1; build git 1a2b3c4d5e6f)").
    static func builtVersion() async throws -> String {
        let result = try await runCaptured(BuiltProducts.path("notifyd"), ["--version"])
        let words = result.output.split(separator: " ")
        try #require(result.status == 0 && words.count >= 2 && words[0] == "notifyd", "notifyd --version: \(result.output)\(result.error)")
        return String(words[1])
    }

    static func decode(_ line: String) throws -> [String: Any] {
        let first = line.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any], "not a JSON object: \(line)")
    }

    // MARK: notifyd_client.py

    @Test(.enabled(if: ContribTool.python3.shouldRun, "needs python3 (Debian package python3)"))
    func pythonClientPingsStatusesAndFailsOnAnUnknownCommand() async throws {
        let python = try ContribTool.python3.require()
        let version = try await Self.builtVersion()
        try await Self.withDaemon { daemon in
            let ping = try await runCaptured(python, [Self.client, "--socket", daemon.socket, "ping"])
            #expect(ping.status == 0, "ping: \(ping.error)")
            let pingReply = try Self.decode(ping.output)
            #expect(pingReply["ok"] as? Bool == true)
            let pingResult = try #require(pingReply["result"] as? [String: Any])
            #expect(pingResult["version"] as? String == version)

            // The socket from $NOTIFYD_SOCKET, as notifyd and notifyctl take it.
            let status = try await runCaptured(python, [Self.client, "status"], environment: ["NOTIFYD_SOCKET": daemon.socket])
            #expect(status.status == 0, "status: \(status.error)")
            let statusReply = try Self.decode(status.output)
            #expect(statusReply["ok"] as? Bool == true)
            let daemonInfo = (statusReply["result"] as? [String: Any])?["daemon"] as? [String: Any]
            #expect(daemonInfo?["socket"] as? String == daemon.socket)

            // Parameters as a JSON object, and a whole request with --json.
            let tags = try await runCaptured(python, [Self.client, "--socket", daemon.socket, "set-tags", #"{"tags":["a"],"wait":false}"#])
            #expect(tags.status == 0, "set-tags: \(tags.output)\(tags.error)")
            let hello = try await runCaptured(python, [Self.client, "--socket", daemon.socket, "--json", #"{"id":7,"cmd":"hello"}"#])
            #expect(hello.status == 0)
            #expect(try Self.decode(hello.output)["id"] as? Int == 7)

            let unknown = try await runCaptured(python, [Self.client, "--socket", daemon.socket, "no-such-command"])
            #expect(unknown.status == 1)
            let unknownReply = try Self.decode(unknown.output)
            #expect(unknownReply["ok"] as? Bool == false)
            #expect((unknownReply["error"] as? [String: Any])?["code"] as? String == "unknown_command")
        }
    }

    @Test(.enabled(if: ContribTool.python3.shouldRun, "needs python3 (Debian package python3)"))
    func pythonClientWatchStreamsUntilInterrupted() async throws {
        let python = try ContribTool.python3.require()
        try await Self.withDaemon { daemon in
            let watch = try await SpawnedProcess.start(python, ["-u", Self.client, "--socket", daemon.socket, "watch"])
            let answered = await eventually(20) { watch.standardOutput.contains(#""ok": true"#) || !watch.isRunning }
            #expect(answered && watch.isRunning, "watch: \(watch.standardOutput)\(watch.standardError)")
            // Logging in changes the registration state (to "no token": nothing is sent to
            // the loopback backend named here), which is an event on the watching connection.
            let login = try await daemon.notifyctl(["login", "--backend", "http://127.0.0.1:9/", "--password-stdin", "--no-wait", "alice"], stdin: Data("alice\n".utf8))
            #expect(login.status == 0 || login.status == 4, "notifyctl login: \(login.error)")
            let streamed = await eventually(20) { watch.standardOutput.contains(#""event""#) || !watch.isRunning }
            watch.signal(SIGINT)
            let status = await watch.wait(seconds: 10)
            #expect(streamed, "no event arrived: \(watch.standardOutput)\(watch.standardError)")
            #expect(status == 0, "watch after SIGINT: \(watch.standardError)")
        }
    }

    @Test(.enabled(if: ContribTool.python3.shouldRun, "needs python3 (Debian package python3)"))
    func pythonClientReportsAnUnreachableDaemonWithExitCode3() async throws {
        let python = try ContribTool.python3.require()
        try await withContribScratch("py") { scratch in
            let result = try await runCaptured(python, [Self.client, "--socket", scratch.path + "/none.sock", "ping"])
            #expect(result.status == 3)
            #expect(result.error.contains(scratch.path + "/none.sock"))
        }
    }

    // MARK: socat-ping.sh

    @Test(.enabled(if: ContribTool.socat.shouldRun, "needs socat (Debian package socat)"))
    func socatOneLinerPings() async throws {
        _ = try ContribTool.socat.require()
        let version = try await Self.builtVersion()
        try await Self.withDaemon { daemon in
            let result = try await runCaptured("/bin/sh", [Self.socatPing], environment: ["NOTIFYD_SOCKET": daemon.socket])
            #expect(result.status == 0, "socat-ping.sh: \(result.error)")
            let reply = try Self.decode(result.output)
            #expect(reply["ok"] as? Bool == true)
            #expect(reply["id"] as? Int == 1)
            #expect((reply["result"] as? [String: Any])?["version"] as? String == version)
        }
    }

    // MARK: socket path resolution

    /// notifyd started with no --socket and no $NOTIFYD_SOCKET picks its socket from
    /// `environment`; the examples, given the same environment, must find it.
    static func examplesFindTheSocket(of environment: [String: String], at expected: String, scratch: ContribScratch) async throws {
        // Nothing from the developer's own configuration may move the socket.
        let config = try scratch.write("config/notifyd/config", "")
        let daemonEnvironment = environment.merging(["XDG_CONFIG_HOME": scratch.path + "/config", "NOTIFYD_CONFIG": config]) { $1 }
        let notifyd = try await SpawnedProcess.start(BuiltProducts.path("notifyd"), ["--state-dir", scratch.path + "/state"], environment: daemonEnvironment)
        do {
            let up = await eventually(20) { FileManager.default.fileExists(atPath: expected) || !notifyd.isRunning }
            try #require(up && notifyd.isRunning, "notifyd did not listen on \(expected): \(notifyd.standardError)")
            if ContribTool.python3.shouldRun {
                let python = try ContribTool.python3.require()
                let ping = try await runCaptured(python, [client, "ping"], environment: environment)
                #expect(ping.status == 0, "notifyd_client.py did not find \(expected): \(ping.error)")
            }
            if ContribTool.socat.shouldRun {
                _ = try ContribTool.socat.require()
                let ping = try await runCaptured("/bin/sh", [socatPing], environment: environment)
                #expect(ping.status == 0 && ping.output.contains(#""ok":true"#), "socat-ping.sh did not find \(expected): \(ping.error)")
            }
            notifyd.signal(SIGTERM)
            #expect(await notifyd.wait(seconds: 10) == 0)
        } catch {
            notifyd.signal(SIGTERM)
            await notifyd.wait(seconds: 10)
            throw error
        }
    }

    @Test func examplesResolveTheRuntimeDirectorySocketLikeNotifyd() async throws {
        try await withContribScratch("rt") { scratch in
            let runtime = try scratch.sub("run")
            try await Self.examplesFindTheSocket(of: ["XDG_RUNTIME_DIR": runtime], at: runtime + "/notifyd/notifyd.sock", scratch: scratch)
        }
    }

    @Test func examplesResolveTheTemporaryDirectorySocketLikeNotifyd() async throws {
        try await withContribScratch("tmp") { scratch in
            // SpawnedProcess already drops XDG_RUNTIME_DIR and NOTIFYD_SOCKET.
            try await Self.examplesFindTheSocket(of: ["TMPDIR": scratch.path], at: scratch.path + "/notifyd-\(getuid())/notifyd.sock", scratch: scratch)
        }
    }
}
