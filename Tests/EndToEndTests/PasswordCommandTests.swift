import DevBackend
import Foundation
import NotifyTestSupport
import Testing

/// The built notifyd running a password command that hangs, floods or prints what is not a
/// password: it is stopped at `password_timeout`, at a reload that replaces it and when
/// notifyd stops, `status` says what is waited for, and nothing it printed reaches the
/// backend unless it is one line of text.
@Suite struct PasswordCommandTests {
    struct Setup {
        let backend: DevBackendServer
        let scratch: ScratchDirectory
        let daemon: DaemonUnderTest
        /// In the command's arguments, so its processes can be found.
        let marker = "1\(Int.random(in: 100_000...999_999))"

        var config: String { scratch.file("config") }

        init(command: (String) -> String, timeout: String = "60s") async throws {
            backend = DevBackendServer(options: .init(quiet: true))
            try backend.start()
            scratch = try ScratchDirectory()
            let marker = self.marker
            try Data("password_command = \(command(marker))\npassword_timeout = \(timeout)\n".utf8).write(to: URL(fileURLWithPath: scratch.file("config")))
            daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, extraArguments: ["--config", scratch.file("config")])
        }

        /// The processes whose command line holds the marker.
        var running: Int { marked.count }

        private var marked: [pid_t] {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.compactMap { entry in
                guard let pid = pid_t(entry), let line = try? String(contentsOfFile: "/proc/\(entry)/cmdline", encoding: .utf8) else { return nil }
                return line.contains(marker) ? pid : nil
            }
        }

        /// Ends what a command left running outside notifyd's reach (in a session of its own).
        func killStrays() {
            for pid in marked { kill(pid, SIGKILL) }
        }

        func end() async {
            await daemon.cleanUp()
            backend.stop()
            scratch.remove()
        }
    }

    @Test func aHungCommandIsStoppedAtItsDeadlineAndStatusSaysWhatIsWaitedFor() async throws {
        let setup = try await Setup(command: { "sleep \($0)" }, timeout: "3s")
        async let login = setup.daemon.notifyctl(["login", "alice"], stdin: Data())
        #expect(await eventually { setup.running > 0 })
        let waiting = try await setup.daemon.notifyctl(["status"])
        #expect(waiting.output.contains("waiting for the password command ("), "\(waiting.output)")
        let ping = try await setup.daemon.notifyctl(["ping"])
        #expect(ping.status == 0, "a hung command holds up only what needs the password")
        _ = try await login
        #expect(await eventually { setup.running == 0 }, "stopped at password_timeout, with the sleep it started")
        let status = try await setup.daemon.notifyctl(["status"])
        #expect(status.output.contains("did not finish within password_timeout (3 s)"), "\(status.output)")
        #expect(setup.backend.requests().isEmpty)
        await setup.end()
    }

    /// `status` asked again and again while the command runs: each answer counts the
    /// seconds it has run so far, not those of the first answer.
    @Test func statusCountsTheSecondsAPasswordCommandHasRun() async throws {
        // A deadline far enough away that a loaded machine sees the count go on before it.
        let setup = try await Setup(command: { "sleep \($0)" }, timeout: "60s")
        async let login = setup.daemon.notifyctl(["login", "alice"], stdin: Data())
        #expect(await eventually { setup.running > 0 })
        func secondsWaited() async -> Int? {
            guard let output = try? await setup.daemon.notifyctl(["status"]).output,
                  let range = output.range(of: "waiting for the password command (") else { return nil }
            return Int(output[range.upperBound...].prefix { $0.isNumber })
        }
        let first = await secondsWaited()
        #expect(first != nil, "status names the command it waits for")
        #expect(await eventually { (await secondsWaited() ?? 0) >= (first ?? 0) + 2 }, "the count goes on")
        // The command fails, and the login with it, without waiting for its deadline.
        setup.killStrays()
        _ = try await login
        await setup.end()
    }

    @Test func aReloadThatReplacesAHungCommandStopsItAndTheNextLoginWorks() async throws {
        let setup = try await Setup(command: { "sleep \($0)" })
        async let first = setup.daemon.notifyctl(["login", "alice"], stdin: Data())
        #expect(await eventually { setup.running > 0 })
        try Data("password_command = printf alice\n".utf8).write(to: URL(fileURLWithPath: setup.config))
        let reload = try await setup.daemon.notifyctl(["reload"])
        #expect(reload.status == 0, "\(reload.output)\(reload.error)")
        #expect(await eventually { setup.running == 0 }, "the replaced command is stopped at once")
        _ = try await first
        let login = try await setup.daemon.notifyctl(["login", "alice"], stdin: Data())
        #expect(login.status == 0, "\(login.output)\(login.error)")
        #expect(await eventually { (try? await setup.daemon.notifyctl(["status"]).output.contains("user:         alice")) == true })
        await setup.end()
    }

    @Test func stoppingNotifydStopsARunningCommand() async throws {
        let setup = try await Setup(command: { "sleep \($0)" })
        async let login = setup.daemon.notifyctl(["login", "alice"], stdin: Data())
        #expect(await eventually { setup.running > 0 })
        #expect(await setup.daemon.stop() == 0)
        _ = try await login
        #expect(await eventually { setup.running == 0 }, "nothing left running, reparented to PID 1")
        await setup.end()
    }

    /// A registration waiting for a password command does not hold up the stop: the
    /// command is stopped first, not after the registrar waited out `password_timeout`.
    @Test func stoppingNotifydEndsARegistrationWaitingForThePassword() async throws {
        let setup = try await Setup(command: { _ in "echo alice" }, timeout: "1h")
        try await setup.daemon.logIn("alice")
        let token = try await setup.daemon.notifyctl(["set-token", "3f2a1b"])
        #expect(token.status == 0, "\(token.output)\(token.error)")
        // A new command is run for the next request: one that hangs.
        try Data("password_command = sleep \(setup.marker); echo alice\npassword_timeout = 1h\n".utf8).write(to: URL(fileURLWithPath: setup.config))
        #expect(try await setup.daemon.notifyctl(["reload"]).status == 0)
        let tags = try await setup.daemon.notifyctl(["set-tags", "--no-wait", "news"])
        #expect(tags.status == 0 || tags.status == 4, "\(tags.output)\(tags.error)")
        #expect(await eventually { setup.running > 0 }, "the registration waits for the command")
        #expect(await setup.daemon.stop() == 0, "notifyd stopped by itself, without waiting out the command: \(setup.daemon.child.standardError)")
        #expect(await eventually { setup.running == 0 })
        await setup.end()
    }

    /// A command that leaves something behind holding its output (a daemon it started, in
    /// a session of its own) has ended when it exits: its password is taken then.
    @Test func aCommandWhoseChildKeepsTheOutputOpenIsDoneWhenItExits() async throws {
        let setup = try await Setup(command: { "echo alice; setsid sleep \($0) &" }, timeout: "1h")
        defer { setup.killStrays() }
        let login = try await setup.daemon.notifyctl(["login", "alice"], stdin: Data())
        #expect(login.status == 0, "\(login.output)\(login.error)")
        #expect(login.output.contains("Logged in as alice"), "\(login.output)")
        let status = try await setup.daemon.notifyctl(["status"])
        #expect(status.output.contains("user:         alice"), "\(status.output)")
        #expect(await setup.daemon.stop() == 0, "\(setup.daemon.child.standardError)")
        await setup.end()
    }

    /// What is not one line of text is refused before any request carries it. (The login
    /// itself is kept, as with any failing command: the command is asked again.)
    @Test(arguments: [
        ("printf 'alice\\0bob' # %@", "gave a NUL byte"),
        ("printf 'alice\\nbob\\n' # %@", "gave more than one line"),
        ("printf 'alice\\r\\n' # %@", "gave a carriage return"),
        ("yes alice # %@", "printed more than 64 KiB"),
    ])
    func whatIsNotAPasswordIsRefusedAndNeverSent(command: String, reason: String) async throws {
        let setup = try await Setup(command: { command.replacingOccurrences(of: "%@", with: $0) })
        _ = try await setup.daemon.notifyctl(["login", "alice"], stdin: Data())
        #expect(await eventually { (try? await setup.daemon.notifyctl(["status"]).output.contains(reason)) == true })
        #expect(setup.backend.requests().isEmpty, "nothing went out")
        #expect(await eventually { setup.running == 0 })
        await setup.end()
    }
}
