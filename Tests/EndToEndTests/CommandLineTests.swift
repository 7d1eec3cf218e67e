import DevBackend
import Foundation
import Testing
import NotifyTestSupport

/// The built notifyd and notifyctl, as a user runs them.
@Suite struct CommandLineTests {
    /// The tutorial backend as updated for FCM v1, the one notifyd's defaults expect.
    static func backend() throws -> DevBackendServer {
        let server = DevBackendServer(options: .init(androidPlatformName: .fcmv1, quiet: true))
        try server.start()
        return server
    }

    @Test func aUserRegistersChecksAndLogsOut() async throws {
        let backend = try Self.backend()
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString)
        defer { backend.stop() }

        let login = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice\n".utf8))
        #expect(login.status == 0, "logged in, no token yet: \(login.output)\(login.error)")
        #expect(login.output.contains("Logged in as alice"))
        #expect(login.output.contains("no device token yet"))

        let token = try await daemon.notifyctl(["set-token", "<3f2a1b9c 5d7e8f00>"])
        #expect(token.status == 0, "\(token.error)")
        #expect(token.output.contains("registered (id "))

        let status = try await daemon.notifyctl(["--json", "status"])
        #expect(status.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any]
        let registration = object?["registration"] as? [String: Any]
        #expect(registration?["state"] as? String == "registered")
        #expect(registration?["id"] as? String == backend.registrations().first?.id)
        #expect(!status.output.contains("\"password\""))

        let human = try await daemon.notifyctl(["status"])
        #expect(human.output.contains("registration: registered"))
        #expect(human.output.contains("token:        3F2A1B9C5D7E8F00"))

        // With a token set, a wrong password is refused and the working login stays.
        let wrong = try await daemon.notifyctl(["login", "--password-stdin", "bob"], stdin: Data("wrong\n".utf8))
        #expect(wrong.status == 1, "\(wrong.output)\(wrong.error)")
        #expect(wrong.error.contains("refused the password of 'bob'"))
        #expect(wrong.error.contains("the credentials of 'alice' stay in force"))
        #expect(try await daemon.notifyctl(["status"]).output.contains("user:         alice"))

        let tags = try await daemon.notifyctl(["set-tags", "sports", "news"])
        #expect(tags.status == 0)
        #expect(Set(backend.registrations().first?.tags ?? []) == ["sports", "news", "username:alice"])

        let unregister = try await daemon.notifyctl(["unregister"])
        #expect(unregister.status == 0)
        #expect(backend.registrations().isEmpty)

        let logout = try await daemon.notifyctl(["logout"])
        #expect(logout.status == 0)
        #expect(logout.output.contains("credentials forgotten"))
        #expect(await daemon.stop() == 0)
        await daemon.cleanUp()
    }

    @Test func aTokenBeforeLoginIsKeptAndExitsWithZero() async throws {
        let daemon = try await DaemonUnderTest(backend: "http://127.0.0.1:9")
        let result = try await daemon.notifyctl(["set-token", "ABCD"])
        #expect(result.status == 0, "saved; the registration waits only for the login")
        #expect(result.output.contains("notifyctl login"))
        await daemon.cleanUp()
    }

    @Test func usageErrorsExitWithTwo() async throws {
        let daemon = try await DaemonUnderTest(backend: nil)
        for arguments in [["set-token"], ["--bogus", "status"], ["set-token", "xyz"], ["frobnicate"], ["set-token", "--platform", "nokia", "AB"], ["help", "nothing"]] {
            let result = try await daemon.notifyctl(arguments)
            #expect(result.status == 2, "notifyctl \(arguments): \(result.error)")
            #expect(!result.error.isEmpty)
        }
        let badFlag = try await run(BuiltProducts.path("notifyd"), ["--frobnicate"])
        #expect(badFlag.status == 2)
        #expect(badFlag.error.contains("unknown option"))
        // The error and where usage is, not the usage itself.
        #expect(badFlag.error.split(separator: "\n").count == 2 && badFlag.error.hasSuffix("Run `notifyd --help` for usage.\n"), "\(badFlag.error)")
        await daemon.cleanUp()
    }

    @Test func anUnreachableDaemonExitsWithThreeAndSaysHowToStartItThere() async throws {
        let path = "/tmp/nd-none-\(UUID().uuidString.prefix(8)).sock"
        let result = try await run(BuiltProducts.path("notifyctl"), ["--socket", path, "status"])
        #expect(result.status == 3)
        #expect(result.error.contains(path))
        #expect(result.error.contains("notifyd --socket \(path) &"))
        // notifyd.socket never listens at a path given with --socket.
        #expect(!result.error.contains("systemctl"), "\(result.error)")
    }

    /// set-token says the platform every time, and why that one; a token that platform's
    /// shape does not allow is refused with the rule.
    @Test func setTokenSaysWhichPlatformEveryTime() async throws {
        let backend = try Self.backend()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString)
        _ = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice".utf8))
        let first = try await daemon.notifyctl(["set-token", "3f2a1b"])
        #expect(first.output.contains("Token set for apns (the `platform` setting, for a first token; --platform to change)"), "\(first.output)")
        let given = try await daemon.notifyctl(["set-token", "--platform", "fcm", "abc:def"])
        #expect(given.output.contains("Token set for fcm (as --platform says)"), "\(given.output)")
        let kept = try await daemon.notifyctl(["set-token", "3f2a1b9c5d7e8f00"])
        #expect(kept.output.contains("Token set for fcm (kept from the previous token; --platform to change)"), "\(kept.output)")
        let json = try await daemon.notifyctl(["--json", "set-token", "<3f2a 1b9c>"])
        #expect(json.output.contains(#""token_platform":{"chosen":"token_form","platform":"apns"}"#), "\(json.output)")
        for (platform, token) in [("fcm", "<bad>"), ("wns", "http://evil/?x")] {
            let refused = try await daemon.notifyctl(["set-token", "--platform", platform, token])
            #expect(refused.status == 2 && refused.error.contains(platform == "fcm" ? "registration token is letters" : "a WNS channel is"), "\(refused.error)")
        }
        await daemon.cleanUp()
    }

    /// `status` exits by state, as its help's table says: 0 registered, 1 something needs
    /// you, 3 not reachable, 4 notifyd is at it by itself.
    @Test func statusExitsByStateAsItsHelpSays() async throws {
        let backend = try Self.backend()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: ["--retry-min", "1h", "--retry-max", "1h"])
        func exit() async throws -> Int32 { try await daemon.notifyctl(["status"]).status }
        #expect(try await exit() == 1, "not logged in")
        #expect(try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice".utf8)).status == 0)
        #expect(try await exit() == 1, "no token")
        #expect(try await daemon.notifyctl(["set-token", "3f2a1b"]).status == 0)
        #expect(try await exit() == 0, "registered")
        // Registered, but a message waits for a backend that refuses it for now.
        try backend.addFault(DevBackend.FaultRule(route: .send, status: 503))
        #expect(try await daemon.notifyctl(["send", "--to", "bob", "later"]).status == 4)
        #expect(try await exit() == 4, "a message waits for a retry")
        backend.clearFaults()
        #expect(try await daemon.notifyctl(["outbox", "retry"]).status == 0)
        #expect(await eventually { (try? await exit()) == 0 }, "delivered: nothing waits")
        try backend.addFault(DevBackend.FaultRule(route: .upsert, status: 503))
        _ = try await daemon.notifyctl(["set-tags", "news"])
        #expect(await eventually { (try? await exit()) == 4 }, "retrying")
        backend.clearFaults()
        #expect(try await daemon.notifyctl(["unregister"]).status == 0)
        #expect(try await exit() == 1, "registration turned off")
        _ = await daemon.stop()
        #expect(try await exit() == 3, "not reachable")
        await daemon.cleanUp()
        let help = try await run(BuiltProducts.path("notifyctl"), ["status", "--help"])
        #expect(help.output.contains("1  something needs you") && help.output.contains("4  notifyd is at it by itself"))
    }

    /// An `unregister` the backend cannot take now: notifyd keeps at it (exit 4), `status`
    /// says so, and a second `unregister` once the backend works deletes it at once.
    @Test func anUnregisterTheBackendCannotTakeNowSaysNotifydKeepsTrying() async throws {
        let backend = try Self.backend()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: ["--retry-min", "1h", "--retry-max", "1h"])
        #expect(try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice".utf8)).status == 0)
        #expect(try await daemon.notifyctl(["set-token", "3f2a1b"]).status == 0)
        let id = try #require(backend.registrations().first?.id)
        try backend.addFault(DevBackend.FaultRule(route: .delete, status: 503))

        let unregister = try await daemon.notifyctl(["unregister"])
        #expect(unregister.status == 4, "\(unregister.output)\(unregister.error)")
        #expect(unregister.output.hasPrefix("Registering is now off, but registration \(id) is not deleted at the backend yet: the backend is unavailable for now (HTTP 503); retrying automatically (next attempt in "), "\(unregister.output)")
        let status = try await daemon.notifyctl(["status"])
        #expect(status.status == 4)
        #expect(status.output.contains("registration: off, not deleted at the backend yet, retrying (id \(id))"), "\(status.output)")
        #expect(status.output.contains("next attempt: "))
        #expect(backend.registrations().map(\.id) == [id])

        backend.clearFaults()
        let again = try await daemon.notifyctl(["unregister"])
        #expect(again.status == 0, "\(again.output)\(again.error)")
        #expect(again.output.contains("Deleted registration \(id)."))
        #expect(backend.registrations().isEmpty)
        #expect(try await daemon.notifyctl(["status"]).status == 1, "registration turned off")
        _ = await daemon.stop()
        await daemon.cleanUp()
    }

    /// At a terminal, login asks for the password naming where it goes, and a password typed
    /// the moment the prompt shows is neither shown nor lost: echo is off before the prompt is.
    @Test(.enabled(if: PseudoTerminal.seesWrites, "needs /proc/PID/syscall (Linux on x86_64 or arm64) to see the prompt being written"))
    func thePasswordPromptHidesWhatIsTypedFromItsFirstMoment() async throws {
        let backend = DevBackendServer(options: .init(quiet: true, accounts: ["alice": "s3cret-typed"]))
        try backend.start()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString)
        let terminal = try PseudoTerminal()
        // Held output keeps notifyctl in its `write` of the prompt, where echo must be off already.
        terminal.holdOutput()
        let login = try await SpawnedProcess.start(BuiltProducts.path("notifyctl"), ["--socket", daemon.socket, "login", "alice"],
                                                   terminal: terminal.path)
        let prompting = await eventually { terminal.isBeingWritten(by: login.pid) || !login.isRunning }
        #expect(prompting && login.isRunning, "notifyctl writes its prompt: \(login.standardError)")
        #expect(!terminal.echoes, "echo is off while the prompt is written")
        terminal.releaseOutput()
        let prompt = "Password for alice at \(backend.baseURL.absoluteString): "
        #expect(terminal.shown(containing: prompt).hasSuffix(prompt))
        terminal.type("s3cret-typed\n")
        #expect(await login.wait() == 0, "\(login.standardOutput)\(login.standardError)")
        #expect(login.standardOutput.contains("Logged in as alice"))
        #expect(!terminal.shown(containing: "\n", seconds: 2).contains("s3cret"), "the password is not echoed")
        #expect(terminal.echoes, "echo is back on afterwards")
        await daemon.cleanUp()
    }

    @Test func helpAndVersionForEveryCommand() async throws {
        let version = try await run(BuiltProducts.path("notifyctl"), ["--version"])
        #expect(version.status == 0)
        #expect(version.output.hasPrefix("notifyctl "))
        let daemonVersion = try await run(BuiltProducts.path("notifyd"), ["--version"])
        #expect(daemonVersion.output.hasPrefix("notifyd "))
        let help = try await run(BuiltProducts.path("notifyctl"), ["--help"])
        let commands = help.output.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  "), let word = line.split(separator: " ").first, !word.hasPrefix("-") else { return nil }
            return String(word)
        }
        #expect(commands.contains("set-token"))
        for command in commands {
            let commandHelp = try await run(BuiltProducts.path("notifyctl"), [command, "--help"])
            #expect(commandHelp.status == 0)
            #expect(commandHelp.output.hasPrefix("usage: notifyctl \(command)"), "\(command) --help")
        }
        // `help` itself, which the list does not name.
        for flag in ["--help", "-h"] {
            let helpHelp = try await run(BuiltProducts.path("notifyctl"), ["help", flag])
            #expect(helpHelp.status == 0, "help \(flag): \(helpHelp.error)")
            #expect(helpHelp.output.hasPrefix("usage: notifyctl help [COMMAND]"), "help \(flag)")
        }
        #expect(help.output.contains("for a command's usage\n"), "the --help line of the main help ends its sentence")
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalStopsTheDaemonCleanly(signal: Int32) async throws {
        let daemon = try await DaemonUnderTest(backend: nil)
        daemon.child.signal(signal)
        #expect(await daemon.child.wait(seconds: 10) == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socket), "the socket is removed")
        #expect(daemon.child.standardError.contains("shutting down"))
        await daemon.cleanUp()
    }

    @Test func aSecondDaemonOnTheSameSocketRefusesToStart() async throws {
        let daemon = try await DaemonUnderTest(backend: nil)
        let second = try await run(BuiltProducts.path("notifyd"), ["--socket", daemon.socket, "--state-dir", daemon.directory + "/other"])
        #expect(second.status == 1)
        #expect(second.error.contains("already running"))
        let ping = try await daemon.notifyctl(["ping"])
        #expect(ping.status == 0, "the first one still answers")
        await daemon.cleanUp()
    }

    @Test func aDaemonKilledHardLeavesASocketTheNextOneReplaces() async throws {
        let first = try await DaemonUnderTest(backend: nil)
        first.child.signal(SIGKILL)
        _ = await first.child.wait(seconds: 5)
        #expect(FileManager.default.fileExists(atPath: first.socket), "SIGKILL leaves the socket file")
        let second = try await SpawnedProcess.start(BuiltProducts.path("notifyd"), ["--socket", first.socket, "--state-dir", first.stateDirectory])
        let ping = await eventually {
            (try? await run(BuiltProducts.path("notifyctl"), ["--socket", first.socket, "ping"]).status) == 0
        }
        #expect(ping)
        second.signal(SIGTERM)
        #expect(await second.wait() == 0)
        #expect(second.standardError.contains("stale socket"))
        await first.cleanUp()
    }

    @Test func loginWithoutATerminalAsksForPasswordStdin() async throws {
        let setsid = "/usr/bin/setsid"
        try #require(FileManager.default.isExecutableFile(atPath: setsid), "setsid (util-linux) detaches notifyctl from any terminal")
        let daemon = try await DaemonUnderTest(backend: "http://127.0.0.1:9")
        let result = try await run(setsid, ["-w", BuiltProducts.path("notifyctl"), "--socket", daemon.socket, "login", "alice"])
        #expect(result.status == 2)
        #expect(result.error.contains("--password-stdin"))
        await daemon.cleanUp()
    }
}
