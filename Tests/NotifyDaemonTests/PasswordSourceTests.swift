import Foundation
import NotifyCore
import NotifyProtocol
import Testing
import NotifyTestSupport

/// A password from a command or a systemd credential instead of the credentials file.
@Suite(.stopsFixtures) struct PasswordSourceTests {
    @Test func aPasswordCommandIsUsedAndNothingIsStored() async throws {
        let fixture = try await DaemonFixture(settings: .fast { $0.passwordSource = .command("printf 'alice\\n'") })
        _ = try await fixture.call(SetTokenCommand(token: "ABCD"))
        let outcome = try await fixture.call(LoginCommand(user: "alice", password: nil))
        #expect(outcome.registration.state == .registered)
        let status = try await fixture.status()
        #expect(status.account?.passwordSource == "command")
        #expect(status.daemon.passwordSource == "command")
        let stored = try String(contentsOfFile: fixture.stateDirectory + "/credentials.json", encoding: .utf8)
        #expect(stored.contains("\"password\" : \"\""), "the command's password is not written down")
        let sent = try await fixture.call(SendCommand(to: "bob", message: "hi"))
        #expect(sent.deliveries.first?.state == .delivered)
    }

    @Test func aFailingPasswordCommandIsReportedAndRetried() async throws {
        let fixture = try await DaemonFixture(settings: .fast { $0.passwordSource = .command("exit 3") })
        _ = try await fixture.call(SetTokenCommand(token: "ABCD"))
        _ = try await fixture.call(LoginCommand(user: "alice", password: nil))
        let status = try await fixture.status()
        #expect(status.account?.passwordProblem?.contains("the password command failed (exit status 3)") == true)
        #expect(await eventually { (try? await fixture.status().registration.message?.contains("the password command failed (exit status 3)")) == true })
        #expect(fixture.backend.requests().isEmpty, "nothing is sent without a password")
    }

    @Test func aSystemdCredentialIsUsed() async throws {
        let directory = "/tmp/nd-credentials-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data("alice\n".utf8).write(to: URL(fileURLWithPath: directory + "/notifyd-password"))
        let fixture = try await DaemonFixture(settings: .fast { $0.passwordSource = .systemdCredential(path: directory + "/notifyd-password") })
        _ = try await fixture.call(SetTokenCommand(token: "ABCD"))
        let outcome = try await fixture.call(LoginCommand(user: "alice", password: nil))
        #expect(outcome.registration.state == .registered)
        #expect(try await fixture.status().account?.passwordSource == "systemd-credential")
    }

    @Test func withoutAnExternalSourceALoginNeedsAPassword() async throws {
        let fixture = try await DaemonFixture()
        let error = try await fixture.callExpectingError(LoginCommand(user: "alice", password: nil))
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("no password given"))
    }
}
