import NotifyCoding
import DevBackend
import Foundation
import NotifyCore
import NotifyProtocol
import NotifySocket
import Testing
import NotifyTestSupport

/// The password goes to the backend and the 0600 credentials file, nowhere else: not in a
/// log line, a reply, another file of the state directory or `status`, on every path a
/// password takes, with a password the backend accepts.
@Suite(.stopsFixtures) struct SecretsTests {
    /// The tutorial backend accepts it for alice: it compares the user name with the text
    /// up to the password's first ':'.
    static let secret = "Sekret-" + UUID().uuidString.prefix(8)
    static let password = "alice:" + secret

    @Test func anAcceptedStoredPasswordIsNeverShown() async throws {
        let fixture = try await DaemonFixture()
        var seen = Seen(fixture: fixture)

        // Login and registration.
        try await seen.call(SetTokenCommand(token: "ABCD"))
        let login = try await seen.call(LoginCommand(user: "alice", password: Self.password))
        #expect(login?.registration.state == .registered)
        // A new registration after a change, and a forced refresh.
        #expect(try await seen.call(SetTagsCommand(tags: ["news"]))?.registration.state == .registered)
        #expect(try await seen.call(RegisterCommand())?.settled == true)
        // A registration retried after an outage.
        try fixture.backend.addFault(.init(route: .any, status: 503, count: 1))
        try await seen.call(SetTagsCommand(tags: ["news", "sports"]))
        let back = await eventually { (try? await fixture.status().registration.state) == .registered }
        let status = try await fixture.status().registration
        #expect(back, "\(status)")
        #expect(fixture.backend.requests().contains { $0.status == 503 })

        // A send, and one retried from the outbox after an outage, with its outbox file on disk.
        #expect(try await seen.call(SendCommand(to: "bob", message: "first"))?.deliveries.first?.state == .delivered)
        try fixture.backend.addFault(.init(route: .send, status: 503))
        #expect(try await seen.call(SendCommand(to: "bob", message: "second"))?.deliveries.first?.state == .queued)
        try await seen.call(OutboxCommand())
        try seen.readStateDirectory()
        fixture.backend.clearFaults()
        let retried = try await seen.call(SendCommand(to: "bob", message: "third", wait: true))
        #expect(retried?.deliveries.first?.state == .delivered)
        #expect(fixture.backend.pushes().compactMap(\.displayedText).contains("From alice: second"))

        // A wrong password, refused by the backend (at the login, or at the next send), then the right one again.
        let wrong = "bob:" + Self.secret
        try await seen.call(LoginCommand(user: "alice", password: wrong))
        try await seen.call(SendCommand(to: "bob", message: "fourth"))
        #expect(fixture.backend.requests().contains { $0.status == 403 })
        #expect(try await seen.call(LoginCommand(user: "alice", password: Self.password))?.registration.state == .registered)

        try await seen.call(StatusCommand())
        try seen.readStateDirectory()
        let credentials = try String(contentsOfFile: fixture.stateDirectory + "/credentials.json", encoding: .utf8)
        #expect(credentials.contains(Self.password), "the one place it is kept")
        try await seen.call(LogoutCommand())
        try seen.readStateDirectory()

        seen.expectNoSecret(passwords: [Self.password, wrong])
    }

    /// The API key of a backend service goes where a password goes, and nowhere else.
    @Test func anAcceptedAPIKeyIsNeverShown() async throws {
        let key = "Key-" + Self.secret
        let fixture = try await DaemonFixture(settings: .fast { $0.backendAPI = .installations },
                                              backendOptions: .init(quiet: true, api: .installations, apiKey: key))
        var seen = Seen(fixture: fixture)
        try await seen.call(SetTokenCommand(token: "ABCD"))
        #expect(try await seen.call(LoginCommand(user: "alice", password: key))?.registration.state == .registered)
        #expect(try await seen.call(SetTagsCommand(tags: ["news"]))?.registration.state == .registered)
        try fixture.backend.addFault(.init(route: .notificationRequest, status: 422, count: 1))
        #expect(try await seen.call(SendCommand(to: "bob", message: "first"))?.deliveries.first?.state == .queued)
        try await seen.call(OutboxCommand())
        try seen.readStateDirectory()
        #expect(await eventually { fixture.backend.notificationRequests().contains { $0.accepted && $0.text == "first" } })
        let wrong = "Wrong-" + Self.secret
        try await seen.call(LoginCommand(user: "alice", password: wrong))
        #expect(fixture.backend.requests().contains { $0.status == 401 })
        try await seen.call(StatusCommand())
        let credentials = try String(contentsOfFile: fixture.stateDirectory + "/credentials.json", encoding: .utf8)
        #expect(credentials.contains(key), "the one place it is kept")
        try await seen.call(LogoutCommand())
        try seen.readStateDirectory()
        seen.expectNoSecret(passwords: [key, wrong])
    }

    @Test func aPasswordFromACommandIsNeverShown() async throws {
        let directory = "/tmp/nd-secret-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data((Self.password + "\n").utf8).write(to: URL(fileURLWithPath: directory + "/password"))
        // Exits 1 after printing the password the first time, then succeeds.
        let command = "if [ -e \(directory)/failed ]; then cat \(directory)/password; else touch \(directory)/failed; cat \(directory)/password; exit 1; fi"
        let fixture = try await DaemonFixture(settings: .fast { $0.passwordSource = .command(command) })
        var seen = Seen(fixture: fixture)

        try await seen.call(SetTokenCommand(token: "ABCD"))
        try await seen.call(LoginCommand(user: "alice", password: nil))
        let registered = await eventually { (try? await fixture.status().registration.state) == .registered }
        let status = try await fixture.status().registration
        #expect(registered, "\(status)")
        #expect(try await seen.call(SendCommand(to: "bob", message: "hi"))?.deliveries.first?.state == .delivered)
        #expect(fixture.log.contains("password command failed"))
        try await seen.call(StatusCommand())
        try seen.readStateDirectory(includingCredentials: true)

        seen.expectNoSecret(passwords: [Self.password])
    }
}

extension SecretsTests {
    /// A password the tutorial backend accepts for `user` (it compares the user name with the
    /// text up to the first ':'), unique to this run; `wrong` gives one it refuses.
    static func password(for user: String, wrong: Bool = false) -> String {
        (wrong ? "x" + user : user) + ":" + "Pw\(wrong ? "Bad" : "")-" + UUID().uuidString.prefix(8)
    }

    /// Every way a login goes, at debug level: before a token (checked by a request of its
    /// own), with one (checked by the registration), refused for the same user and for
    /// another, unchecked while the backend is down, with registration off, and a logout
    /// the backend refuses to carry out.
    @Test func everyLoginPathKeepsTheStoredPasswordOut() async throws {
        let fixture = try await DaemonFixture()
        var seen = Seen(fixture: fixture)
        var passwords: [String] = []
        func login(_ user: String, wrong: Bool = false) async throws {
            let password = Self.password(for: user, wrong: wrong)
            passwords.append(password)
            try await seen.call(LoginCommand(user: user, password: password))
        }

        try await login("alice")
        try await login("alice", wrong: true)
        try await login("bob", wrong: true)
        try await login("bob")
        try await seen.call(SetTokenCommand(token: "ABCD"))
        try await login("bob", wrong: true)
        try await login("alice", wrong: true)
        try await login("alice")
        try await seen.call(SendCommand(to: "bob", message: "hi"))
        try fixture.backend.addFault(.init(route: .any, status: 503))
        try await login("bob")
        try await seen.call(LogoutCommand())
        fixture.backend.clearFaults()
        try await seen.call(UnregisterCommand())
        try await login("alice", wrong: true)
        try await login("alice")
        try await seen.call(StatusCommand())
        try seen.readStateDirectory()
        try await seen.call(LogoutCommand())
        try seen.readStateDirectory()

        #expect(fixture.log.contains("refused the login of bob"), "the refusals were logged")
        #expect(fixture.log.contains("could not be checked"), "the login while the backend was down was logged")
        seen.expectNoSecret(passwords: passwords)
    }

    /// A password notifyd fetches itself (a command, a systemd credential) on a login
    /// before a token, a refused one and a login with a token, at debug level.
    @Test(arguments: ["command", "systemd-credential"])
    func aPasswordNotifydFetchesIsNeverShown(source: String) async throws {
        let directory = "/tmp/nd-secret-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/notifyd-password"
        let good = Self.password(for: "alice"), wrong = Self.password(for: "alice", wrong: true)
        try Data(wrong.utf8).write(to: URL(fileURLWithPath: file))
        let passwordSource: PasswordSource = source == "command" ? .command("cat \(file)") : .systemdCredential(path: file)
        let fixture = try await DaemonFixture(settings: .fast { $0.passwordSource = passwordSource })
        var seen = Seen(fixture: fixture)

        try await seen.call(LoginCommand(user: "alice", password: nil))
        try Data(good.utf8).write(to: URL(fileURLWithPath: file))
        try await seen.call(LoginCommand(user: "alice", password: nil))
        try await seen.call(SetTokenCommand(token: "ABCD"))
        try await seen.call(LoginCommand(user: "alice", password: nil))
        try await seen.call(SendCommand(to: "bob", message: "hi"))
        try await seen.call(StatusCommand())
        try seen.readStateDirectory(includingCredentials: true)

        #expect(fixture.log.contains("refused the login of alice"), "the wrong password was tried and refused")
        seen.expectNoSecret(passwords: [good, wrong])
    }
}

/// Everything of the daemon's a person or program could see: log lines, reply lines
/// exactly as written on the socket, and the state directory's files.
private struct Seen {
    let fixture: DaemonFixture
    var texts: [String] = []

    init(fixture: DaemonFixture) { self.fixture = fixture }

    /// Runs a command over the raw protocol, keeps its reply line, and returns its result
    /// (nil for an error reply).
    @discardableResult
    mutating func call<Command: NotifyCommand>(_ command: Command) async throws -> Command.Result? {
        let path = fixture.socketPath
        let line = try await onThread { () -> [UInt8] in
            let connection = try RawConnection(path: path)
            // As long as `DaemonFixture.call` waits: a loaded machine is slow, not broken.
            UnixSocket.setReceiveTimeout(connection.fd, seconds: 30)
            try connection.send(String(decoding: try WireCoding.line(Request(id: .number(1), command: command)), as: UTF8.self))
            guard case .line(let bytes) = connection.reader.next() else { throw NoReply() }
            return bytes
        }
        texts.append(String(decoding: line, as: UTF8.self))
        return try WireCoding.decoder().decode(Response<Command.Result>.self, from: Data(line)).result
    }

    struct NoReply: Error {}

    /// Every file under the state directory; credentials.json only where it should hold no password.
    mutating func readStateDirectory(includingCredentials: Bool = false) throws {
        let root = fixture.stateDirectory
        guard let files = FileManager.default.enumerator(atPath: root) else { return }
        for case let name as String in files where includingCredentials || name != "credentials.json" {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + name, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            texts.append(name + ": " + String(decoding: try Data(contentsOf: URL(fileURLWithPath: root + "/" + name)), as: UTF8.self))
        }
    }

    func expectNoSecret(passwords: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let everything = (texts + [fixture.log]).joined(separator: "\n")
        #expect(fixture.log.contains("registered"), "the log was captured", sourceLocation: sourceLocation)
        for password in passwords {
            let secret = String(password.split(separator: ":").last!)
            let basics = ["alice", "bob"].map { ("base64 of \($0):password", Data("\($0):\(password)".utf8).base64EncodedString()) }
            for (what, needle) in [("password", password), ("its secret part", secret)] + basics {
                let line = everything.split(separator: "\n").first { $0.contains(needle) }
                // The failure names the line with the secret blanked out: test output shows none either.
                let shown = line?.replacingOccurrences(of: needle, with: "<\(what)>")
                #expect(shown == nil, "\(what) shown", sourceLocation: sourceLocation)
            }
        }
    }
}
