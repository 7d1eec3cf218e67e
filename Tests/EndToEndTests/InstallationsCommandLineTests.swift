import DevBackend
import Foundation
import NotifyTestSupport
import Testing

/// The built notifyd and notifyctl at the backend service of Microsoft's newer tutorials
/// (`backend_api = installations`): the API key taken and kept as a password is, and never
/// shown; the installation, sends with tags, and what `send` accepted surviving SIGKILL.
@Suite struct InstallationsCommandLineTests {
    static let key = "api-Key-" + UUID().uuidString.prefix(12)
    static let token = String(repeating: "3F2A1B9C", count: 8)
    static let environment = ["NOTIFYD_BACKEND_API": "installations"]

    static func backend() throws -> DevBackendServer {
        let server = DevBackendServer(options: .init(quiet: true, api: .installations, apiKey: key))
        try server.start()
        return server
    }

    /// The key never shows: in a reply, a line notifyd logged, its arguments, or a file of
    /// its state directory other than the 0600 credentials file.
    static func expectKeyNowhere(_ daemon: DaemonUnderTest, outputs: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        for (place, text) in [("notifyd's log", daemon.child.standardError)] + outputs.map({ ("notifyctl's output", $0) }) {
            #expect(!text.contains(key), "the key appears in \(place)", sourceLocation: sourceLocation)
        }
        let arguments = (try? String(contentsOfFile: "/proc/\(daemon.child.pid)/cmdline", encoding: .utf8)) ?? ""
        #expect(!arguments.contains(key), "the key appears in notifyd's arguments", sourceLocation: sourceLocation)
        let holding = KeyringTests.filesHolding(key, under: daemon.stateDirectory)
        #expect(holding.allSatisfy { $0 == "credentials.json" }, "\(holding)", sourceLocation: sourceLocation)
    }

    @Test func aLifeAtTheBackendServiceThroughTheCommandLine() async throws {
        let backend = try Self.backend()
        defer { backend.stop() }
        let daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, environment: Self.environment)
        var outputs: [String] = []
        func run(_ arguments: [String], stdin: Data? = nil) async throws -> (status: Int32, output: String, error: String) {
            let result = try await daemon.notifyctl(arguments, stdin: stdin)
            outputs += [result.output, result.error]
            return result
        }

        let wrong = try await run(["login", "--password-stdin", "alice"], stdin: Data("not-the-key\n".utf8))
        #expect(wrong.status == 1, "\(wrong.output)\(wrong.error)")
        #expect(wrong.error.contains("refused"), "\(wrong.error)")
        let login = try await run(["login", "--password-stdin", "alice"], stdin: Data((Self.key + "\n").utf8))
        #expect(login.status == 0, "\(login.output)\(login.error)")

        #expect(try await run(["set-token", Self.token]).status == 0)
        let installation = try #require(backend.installations().first)
        #expect(installation.tags == ["username:alice"] && installation.platform == "apns")
        let status = try await run(["status"])
        #expect(status.output.contains("(installation \(installation.id))"), "\(status.output)")
        #expect(status.output.contains("(backend_api = installations)") && status.output.contains("API key:"), "\(status.output)")

        let text = #"He said "hi" \ and $(alertAction)"#
        let sent = try await run(["send", "--to", "bob", "--tag", "news", "--tag", "sports", "--action", "open", "--wait", text])
        #expect(sent.status == 0 && sent.output.contains("all platforms: accepted by the backend"), "\(sent.output)\(sent.error)")
        let request = try #require(backend.notificationRequests().last)
        #expect(request.tags == ["username:bob", "news", "sports"] && request.displayedText == text && request.displayedAction == "open", "\(request)")
        let silent = try await run(["send", "--tag", "news", "--silent", "--wait", ""])
        #expect(silent.status == 0, "\(silent.output)\(silent.error)")
        let withPlatforms = try await run(["send", "--to", "bob", "--pns", "apns", "hi"])
        #expect(withPlatforms.status == 2 && withPlatforms.error.contains("leave out --pns"), "\(withPlatforms.error)")

        let logout = try await run(["logout"])
        #expect(logout.status == 0, "\(logout.output)\(logout.error)")
        #expect(backend.installations().isEmpty, "logout deletes the installation")
        Self.expectKeyNowhere(daemon, outputs: outputs)
        await daemon.cleanUp()
    }

    /// A request accepted while the backend failed is on disk before `send` answers.
    @Test func aQueuedRequestSurvivesSIGKILLAndGoesOutOnce() async throws {
        let backend = try Self.backend()
        defer { backend.stop() }
        let first = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, environment: Self.environment)
        try await first.logIn("alice", password: Self.key)
        try backend.addFault(.init(route: .notificationRequest, status: 503))
        let queued = try await first.notifyctl(["send", "--tag", "news", "kept across a kill"])
        #expect(queued.status == 4, "\(queued.output)\(queued.error)")
        first.child.signal(SIGKILL)
        _ = await first.child.wait(seconds: 10)
        backend.clearFaults()

        let second = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, stateDirectory: first.stateDirectory, environment: Self.environment)
        #expect(await eventually { backend.notificationRequests().contains { $0.accepted && $0.text == "kept across a kill" } })
        #expect(await eventually { (try? await second.notifyctl(["outbox"]).output.contains("The outbox is empty")) == true })
        #expect(backend.notificationRequests().count { $0.accepted && $0.text == "kept across a kill" } == 1)
        Self.expectKeyNowhere(second, outputs: [])
        await second.cleanUp()
        await first.cleanUp()
    }

    /// The key in the session's keyring, as a password is: no file of notifyd's holds it,
    /// and a new notifyd reads it back to send.
    @Test func theKeyringKeepsTheKey() async throws {
        let keyring = try KeyringTests.FakeKeyring()
        defer { keyring.directory.remove() }
        let backend = try Self.backend()
        defer { backend.stop() }
        let environment = keyring.environment.merging(Self.environment) { $1 }
        var daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, environment: environment)
        let state = daemon.stateDirectory
        let login = try await daemon.notifyctl(["login", "--password-stdin", "alice"], stdin: Data((Self.key + "\n").utf8))
        #expect(login.status == 0 && login.output.contains("The API key is kept in the keyring"), "\(login.output)\(login.error)")
        #expect(KeyringTests.filesHolding(Self.key, under: state).isEmpty)

        _ = await daemon.stop()
        daemon = try await DaemonUnderTest(backend: backend.baseURL.absoluteString, stateDirectory: state, environment: environment)
        let sent = try await daemon.notifyctl(["send", "--to", "bob", "--wait", "read back from the keyring"])
        #expect(sent.status == 0, "\(sent.output)\(sent.error)")
        #expect(backend.notificationRequests().contains { $0.accepted && $0.text == "read back from the keyring" })
        Self.expectKeyNowhere(daemon, outputs: [login.output, login.error, sent.output, sent.error])
        await daemon.cleanUp()
    }
}
