import Foundation
import NotifyClient
import NotifyProtocol
import Testing

/// The password goes to the backend and the 0600 credentials file, nowhere else.
@Suite(.stopsFixtures) struct SecretsTests {
    static let password = "hunter2-Sekret-\(UUID().uuidString.prefix(6))"

    @Test func thePasswordAppearsInNoLogStatusStateOrError() async throws {
        let fixture = try await DaemonFixture()
        let basic = Data("alice:\(Self.password)".utf8).base64EncodedString()

        // Wrong password (the tutorial backend wants user == password): saved while there is
        // no token to check it with, then refused at the first registration; a login checked
        // with the token set is refused and not saved.
        _ = try await fixture.login("alice", password: Self.password)
        let outcome = try await fixture.call(SetTokenCommand(token: "ABCD"))
        #expect(outcome.registration.state == .unauthorized)
        let refusedLogin = try await fixture.callExpectingError(LoginCommand(user: "alice", password: Self.password))
        #expect(refusedLogin.code == .unauthorized)
        try fixture.backend.addFault(.init(route: .any, status: 503, count: 1))
        let retried = try await fixture.call(RegisterCommand())
        #expect(retried.settled)

        let status = try await onThread { () -> String in
            let client = try NotifyClient(socketPath: fixture.socketPath)
            return "\(try client.call(StatusCommand()).raw)"
        }
        let state = try String(contentsOfFile: fixture.stateDirectory + "/state.json", encoding: .utf8)
        let everything = [fixture.log, status, state, "\(outcome)", "\(retried)", "\(refusedLogin)"].joined(separator: "\n")
        #expect(!fixture.log.isEmpty)
        #expect(!everything.contains(Self.password))
        #expect(!everything.contains(basic))

        // It is in the credentials file, which only the user can read.
        let credentials = try String(contentsOfFile: fixture.stateDirectory + "/credentials.json", encoding: .utf8)
        #expect(credentials.contains(Self.password))
    }
}
