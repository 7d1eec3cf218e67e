import DevBackend
import Foundation
import NotifyTestSupport
import Testing

/// A password goes only to the backend it was given for: the built notifyd moved from one
/// backend origin to another by a reload, with a password from a file or from a command
/// that changes with it, and what `logout` keeps of the old backend's password.
@Suite struct CredentialBoundaryTests {

    /// A proxy named in the environment (as corporate shells and environment.d set one)
    /// would get plain http's password in clear, and could answer for the backend: plain
    /// http goes straight to the backend on this machine.
    @Test func plainHTTPGoesStraightToTheBackendWhateverProxyTheEnvironmentNames() async throws {
        let backend = DevBackendServer(options: .init(quiet: true))
        let proxy = DevBackendServer(options: .init(quiet: true))
        try backend.start()
        try proxy.start()
        defer {
            backend.stop()
            proxy.stop()
        }
        let named = proxy.baseURL.absoluteString
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString,
                                               environment: ["http_proxy": named, "HTTP_PROXY": named, "all_proxy": named, "ALL_PROXY": named])
        let login = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice\n".utf8))
        #expect(login.status == 0, "\(login.output)\(login.error)")
        #expect(try await daemon.notifyctl(["set-token", "3f2a1b"]).status == 0)
        #expect(backend.registrations().count == 1)
        #expect(proxy.acceptedConnections == 0, "the proxy was sent \(proxy.requests().count) requests")
        _ = await daemon.stop()
        await daemon.cleanUp()
    }
    /// Two backends that each accept alice with a password of their own, and a config
    /// naming the first.
    struct Setup {
        let a = DevBackendServer(options: .init(quiet: true, accounts: ["alice": "pw-for-A-only"]))
        let b = DevBackendServer(options: .init(quiet: true, accounts: ["alice": "pw-for-B-only"]))
        let scratch: ScratchDirectory
        let daemon: DaemonUnderTest

        var config: String { scratch.file("config") }

        /// `commands`: the password comes from `password_command`, not from login.
        init(commands: Bool) async throws {
            try a.start()
            try b.start()
            scratch = try ScratchDirectory()
            try Self.write(backend: a, commands: commands, to: scratch.file("config"))
            daemon = try await DaemonUnderTest(backend: nil, extraArguments: ["--config", scratch.file("config")])
            let login = try await Self.logIn(daemon, commands ? nil : "pw-for-A-only")
            #expect(login.status == 0, "\(login.output)\(login.error)")
            let token = try await daemon.notifyctl(["set-token", "3f2a1b"])
            #expect(token.status == 0, "\(token.output)\(token.error)")
            #expect(a.registrations().count == 1)
        }

        /// `notifyctl login alice`, with `password` on standard input, or asking none of a
        /// password command.
        static func logIn(_ daemon: DaemonUnderTest, _ password: String?) async throws -> (status: Int32, output: String, error: String) {
            guard let password else { return try await daemon.notifyctl(["login", "alice"], stdin: Data()) }
            return try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("\(password)\n".utf8))
        }

        static func write(backend: DevBackendServer, commands: Bool, to path: String) throws {
            let password = backend.options.accounts["alice"] ?? ""
            let text = "backend = \(backend.baseURL.absoluteString)\n" + (commands ? "password_command = echo \(password)\n" : "")
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        }

        func moveTo(_ backend: DevBackendServer, commands: Bool) async throws {
            try Self.write(backend: backend, commands: commands, to: config)
            let reload = try await daemon.notifyctl(["reload"])
            #expect(reload.status == 0, "\(reload.output)\(reload.error)")
        }

        /// A moves to B while A fails every deletion for now: the id of the registration
        /// left there, to delete.
        func moveToBWhileAFailsDeletions(commands: Bool) async throws -> String {
            let id = try #require(a.registrations().first?.id)
            try a.addFault(.init(route: .delete, status: 503, count: 1000))
            try await moveTo(b, commands: commands)
            return id
        }

        /// notifyd stopped, and started again on the same state and config.
        /// `whileStopped` runs between the stop and the start: what it does to the state
        /// directory is not undone by a retry of the daemon that was stopping.
        func restart(whileStopped: () -> Void = {}) async throws -> DaemonUnderTest {
            #expect(await daemon.stop() == 0)
            whileStopped()
            return try await DaemonUnderTest(backend: nil, extraArguments: ["--config", config], stateDirectory: daemon.stateDirectory)
        }

        /// Requests a backend refused for the password: another backend's was sent there.
        func refusals(at backend: DevBackendServer) -> [DevBackend.LoggedRequest] {
            backend.requests().filter { $0.status == 403 }
        }

        func end() async {
            await daemon.cleanUp()
            a.stop()
            b.stop()
            scratch.remove()
        }
    }

    /// The repro: `backend` and `password_command` changed together. The old
    /// registration is deleted at A with A's own password (the command now gives B's), and B
    /// gets nothing until alice logs in there.
    @Test(arguments: [true, false])
    func aMoveDeletesTheOldRegistrationWithTheOldPasswordAndTakesNoneToTheNewBackend(commands: Bool) async throws {
        let setup = try await Setup(commands: commands)
        try await setup.moveTo(setup.b, commands: commands)
        #expect(await eventually { setup.a.registrations().isEmpty }, "deleted at A: \(setup.a.requests())")
        #expect(setup.refusals(at: setup.a).isEmpty, "A never got B's password: \(setup.a.requests())")

        let status = try await setup.daemon.notifyctl(["status"])
        #expect(status.output.contains("(not logged in here) alice is logged in at http://127.0.0.1:\(setup.a.port) only"), "\(status.output)")
        let send = try await setup.daemon.notifyctl(["send", "--to", "bob", "not yet"])
        #expect(send.status == 1, "\(send.output)\(send.error)")
        #expect(send.error.contains("log in there with `notifyctl login alice`"), "\(send.error)")
        #expect(setup.b.requests().isEmpty, "nothing, and no password, went to B before a login there")

        let login = try await Setup.logIn(setup.daemon, commands ? nil : "pw-for-B-only")
        #expect(login.status == 0, "\(login.output)\(login.error)")
        #expect(await eventually { setup.b.registrations().count == 1 })
        #expect(setup.refusals(at: setup.b).isEmpty && setup.refusals(at: setup.a).isEmpty)
        await setup.end()
    }

    /// A password command's output is kept in memory only: a deletion left for after a
    /// restart cannot have it, and is given up with a line naming it, never made with what
    /// the command gives now.
    @Test func aDeletionWhosePasswordCameFromACommandIsNotMadeWithTheNextOne() async throws {
        let setup = try await Setup(commands: true)
        let id = try await setup.moveToBWhileAFailsDeletions(commands: true)
        #expect(await eventually { setup.a.requests().contains { $0.method == "DELETE" } }, "a first attempt, with A's password")
        let restarted = try await setup.restart()
        setup.a.clearFaults()
        #expect(await eventually { restarted.child.standardError.contains("cannot delete registration \(id) at \(setup.a.baseURL.absoluteString)") },
                "\(restarted.child.standardError)")
        #expect(restarted.child.standardError.contains("stays there until deleted by hand"))
        #expect(setup.refusals(at: setup.a).isEmpty, "B's password never went to A: \(setup.a.requests())")
        await restarted.cleanUp()
        await setup.end()
    }

    /// What a deletion at a backend that is down keeps of the old password: `logout` says
    /// so, `logout --forget-old-backends` gives it up naming the registration, and a copy of
    /// the file others could read is made private again with a warning.
    @Test func logoutSaysWhatItKeepsAndForgetsItOnRequest() async throws {
        let setup = try await Setup(commands: false)
        let id = try await setup.moveToBWhileAFailsDeletions(commands: false)
        let retired = setup.daemon.stateDirectory + "/retired-registrations.json"
        #expect(await eventually { FileManager.default.fileExists(atPath: retired) })

        let logout = try await setup.daemon.notifyctl(["logout"])
        #expect(logout.status == 0, "\(logout.output)\(logout.error)")
        #expect(logout.output.contains("Still kept until that backend answers"), "\(logout.output)")
        #expect(logout.output.contains("the password of alice for \(setup.a.baseURL.absoluteString), to delete registration \(id) there"), "\(logout.output)")
        #expect(try String(contentsOfFile: retired, encoding: .utf8).contains("pw-for-A-only"), "kept, as logout said")

        // Someone's copy made it readable: repaired, and said, at the next start.
        let restarted = try await setup.restart { #expect(chmod(retired, 0o644) == 0) }
        var info = stat()
        #expect(stat(retired, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(await eventually { restarted.child.standardError.contains("\(retired) could be read by others (mode 0644)") }, "\(restarted.child.standardError)")

        let forget = try await restarted.notifyctl(["logout", "--forget-old-backends"])
        #expect(forget.status == 0, "\(forget.output)\(forget.error)")
        #expect(forget.output.contains("Gave up deleting registration \(id) at \(setup.a.baseURL.absoluteString)"), "\(forget.output)")
        #expect(!FileManager.default.fileExists(atPath: retired))
        #expect(KeyringTests.filesHolding("pw-for-A-only", under: restarted.stateDirectory).isEmpty)
        await restarted.cleanUp()
        await setup.end()
    }
}
