import DevBackend
import Foundation
import Testing
import NotifyTestSupport

/// The built notifyd and notifyctl through the account changes of a normal day: a
/// re-login, a mistyped password, a logout while the backend is down.
@Suite struct AccountTransitionTests {
    /// notifyd started without a backend: alice chose hers at login.
    static func aliceRegistered() async throws -> (DevBackendServer, DaemonUnderTest, backend: String) {
        let backend = DevBackendServer(options: .init(quiet: true))
        try backend.start()
        let url = backend.baseURL.absoluteString
        let daemon = try await DaemonUnderTest(backend: nil)
        let login = try await daemon.notifyctl(["login", "--backend", url, "--password-stdin", "alice"], stdin: Data("alice\n".utf8))
        #expect(login.status == 0, "\(login.output)\(login.error)")
        let token = try await daemon.notifyctl(["set-token", "3f2a1b"])
        #expect(token.status == 0, "\(token.output)\(token.error)")
        return (backend, daemon, url)
    }

    @Test func aMistypedPasswordForTheUserLoggedInChangesNothing() async throws {
        let (backend, daemon, url) = try await Self.aliceRegistered()
        defer { backend.stop() }
        let credentials = daemon.stateDirectory + "/credentials.json"
        let saved = try Data(contentsOf: URL(fileURLWithPath: credentials))

        // A re-login needs no --backend: the account keeps the one it chose.
        let again = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice\n".utf8))
        #expect(again.status == 0, "\(again.output)\(again.error)")
        let good = try Data(contentsOf: URL(fileURLWithPath: credentials))

        let wrong = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("wrong\n".utf8))
        #expect(wrong.status == 1, "\(wrong.output)\(wrong.error)")
        #expect(wrong.error.contains("refused the password of 'alice'"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: credentials)) == good, "the good password is still the one saved")
        #expect(good != saved, "the good re-login was saved")
        let status = try await daemon.notifyctl(["status"])
        #expect(status.output.contains("registration: registered"), "\(status.output)")
        #expect(status.output.contains("backend:      \(url)"))
        let send = try await daemon.notifyctl(["send", "--to", "bob", "still here"])
        #expect(send.status == 0, "\(send.output)\(send.error)")
        #expect(backend.pushes().count == 1)
        await daemon.cleanUp()
    }

    /// A login replaced by a later one before the backend answered is not a usage error:
    /// exit 1, with its own code.
    @Test func aLoginReplacedBeforeTheBackendAnsweredExits1WithItsOwnCode() async throws {
        let backend = DevBackendServer(options: .init(quiet: true))
        try backend.start()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString)
        // Long enough that bob's login arrives while alice's check waits, however slow the machine.
        try backend.addFault(.init(route: .create, delay: 10, count: 1))
        async let first = daemon.notifyctl(["--json", "login", "--password-stdin", "alice"], stdin: Data("alice\n".utf8))
        #expect(await eventually { backend.faults().isEmpty }, "alice's check waits at the backend")
        // Bob's check waits for alice's to end: his login waits for both.
        let second = try await daemon.notifyctl(["login", "--timeout", "60", "--password-stdin", "bob"], stdin: Data("bob\n".utf8))
        let replaced = try await first
        #expect(second.status == 0, "\(second.output)\(second.error)")
        #expect(replaced.status == 1, "\(replaced.output)\(replaced.error)")
        #expect(replaced.output.contains("\"login_superseded\""), "\(replaced.output)")
        #expect(replaced.output.contains("replaced by a later login"), "\(replaced.output)")
        // Bob's check, which waited for alice's, is made once hers ended: he is logged in.
        #expect(await eventually { (try? await daemon.notifyctl(["status"]).output.contains("user:         bob")) == true })
        #expect(backend.requestCount(route: .create) == 2, "alice's check, then bob's")
        await daemon.cleanUp()
    }

    /// A check still waiting at the backend when `--timeout` ends is not a login: it says
    /// so, exits 4, and a wrong password is refused once the backend answers.
    @Test func aLoginStillBeingCheckedIsNotReportedAsLoggedIn() async throws {
        let backend = DevBackendServer(options: .init(quiet: true))
        try backend.start()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString)
        try backend.addFault(.init(route: .any, delay: 4, count: 1))
        let login = try await daemon.notifyctl(["login", "--timeout", "1", "--password-stdin", "alice"], stdin: Data("WRONG\n".utf8))
        #expect(login.status == 4, "\(login.output)\(login.error)")
        #expect(!login.output.contains("Logged in") && !login.error.contains("Logged in"), "\(login.output)\(login.error)")
        #expect(login.error.contains("still being checked"), "\(login.error)")
        #expect(await eventually { backend.requests().contains { $0.status == 403 } }, "the backend refused it in the end")
        let status = try await daemon.notifyctl(["status"])
        #expect(status.output.contains("not logged in"), "\(status.output)")
        await daemon.cleanUp()
    }

    @Test func aLogoutWhileTheBackendIsDownKeepsTheRegistrationGoing() async throws {
        let (backend, daemon, _) = try await Self.aliceRegistered()
        defer { backend.stop() }
        try backend.addFault(.init(route: .delete, status: 503, count: 1))
        let logout = try await daemon.notifyctl(["logout"])
        #expect(logout.status == 1, "\(logout.output)\(logout.error)")
        #expect(logout.error.contains("still logged in"))
        let status = try await daemon.notifyctl(["status"])
        #expect(status.output.contains("registration: registered"), "\(status.output)")
        #expect(status.output.contains("user:         alice"))
        // Registration is still on, on disk too: a restart keeps the device fresh.
        let state = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: daemon.stateDirectory + "/state.json"))) as? [String: Any]
        #expect(state?["enabled"] as? Bool == true)
        await daemon.cleanUp()
    }

    @Test func withoutABackendTheHintNamesTheConfigFile() async throws {
        let daemon = try await DaemonUnderTest(backend: nil)
        let login = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data("alice\n".utf8))
        #expect(login.status == 1)
        #expect(login.error.contains("notifyctl login --backend URL"), "\(login.error)")
        #expect(login.error.contains("`backend = URL`"), "\(login.error)")
        await daemon.cleanUp()
    }
}
