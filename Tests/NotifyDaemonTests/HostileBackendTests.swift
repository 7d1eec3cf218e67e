import DevBackend
import Foundation
import NotifyClient
import NotifyProtocol
import NotifyTestSupport
import Testing

/// notifyd against a backend that misbehaves: replies that crashed Foundation's JSON
/// decoder, error bodies that echo the request's credentials, Retry-After beyond reason.
@Suite(.stopsFixtures) struct HostileBackendTests {
    static let password = "Pw-\(UUID().uuidString.prefix(12))"

    /// A 200 to the registration request whose body is deeply nested `[`: the guard makes
    /// it a failure that is retried, and notifyd keeps answering.
    @Test(arguments: [512, 513, 514])
    func aDeeplyNestedRegistrationReplyIsRetriedAndNotifydLivesOn(depth: Int) async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .create, status: 200, count: 1, body: String(repeating: "[", count: depth)))
        let outcome = try await fixture.call(SetTokenCommand(token: "ABCD"))
        #expect(outcome.registration.state == .retrying)
        #expect(outcome.registration.message?.contains("instead of a JSON string id") == true)
        _ = try await fixture.call(PingCommand())
        #expect(await eventually { (try? await fixture.status().registration.state) == .registered })
    }

    @Test func aHugeRetryAfterIsCappedAtRetryMaxAndStatusSaysSo() async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .create, status: 503, retryAfter: 999_999_999, count: 1))
        let outcome = try await fixture.call(SetTokenCommand(token: "ABCD"))
        #expect(outcome.registration.state == .retrying)
        #expect(outcome.registration.message?.contains("the backend asked to wait 999999999 s, capped at retry_max (0.2 s)") == true)
        #expect(await eventually { (try? await fixture.status().registration.state) == .registered })
    }

    /// A 400 whose body echoes the request headers, Authorization included, on the
    /// registration, a first send and an outbox retry: the password and its base64 reach
    /// no state file, outbox entry, log line, reply or status.
    @Test func echoedCredentialsReachNoStateLogOrStatus() async throws {
        let fixture = try await DaemonFixture(backendOptions: .init(quiet: true, accounts: ["carol": Self.password]))
        let basic = Data("carol:\(Self.password)".utf8).base64EncodedString()
        var replies: [String] = []

        // Registration refused with an echo: stored as rejected_reason.
        try fixture.backend.addFault(.init(route: .upsert, status: 400, count: 1, echoHeaders: true))
        _ = try await fixture.call(SetTokenCommand(token: "ABCD"))
        let login = try await fixture.login("carol", password: Self.password)
        replies.append("\(login)")
        #expect(login.registration.state == .rejected)
        #expect(login.registration.message?.contains("Authorization: Basic [redacted]") == true)

        // A send refused at once, and one refused after waiting in the outbox.
        try fixture.backend.addFault(.init(route: .send, status: 400, count: 1, echoHeaders: true))
        let refused = try await fixture.call(SendCommand(to: "bob", message: "hi", wait: true))
        replies.append("\(refused)")
        #expect(refused.deliveries.first?.state == .failed)
        try fixture.backend.addFault(.init(route: .send, status: 503, count: 1))
        try fixture.backend.addFault(.init(route: .send, status: 400, count: 1, echoHeaders: true))
        replies.append("\(try await fixture.call(SendCommand(to: "bob", message: "later")))")
        #expect(await eventually { (try? await fixture.call(OutboxCommand()).deliveries.first?.state) == .failed })

        let raw = try await onThread { () -> String in
            let client = try NotifyClient(socketPath: fixture.socketPath)
            return "\(try client.call(StatusCommand()).raw)\n\(try client.call(OutboxCommand()).raw)"
        }
        let state = try String(contentsOfFile: fixture.stateDirectory + "/state.json", encoding: .utf8)
        #expect(state.contains("[redacted]"), "the rejected reason is kept, scrubbed")
        let outboxFiles = try FileManager.default.contentsOfDirectory(atPath: fixture.stateDirectory + "/outbox")
            .map { try String(contentsOfFile: fixture.stateDirectory + "/outbox/" + $0, encoding: .utf8) }
        #expect(!outboxFiles.isEmpty)
        let everything = ([fixture.log, raw, state] + outboxFiles + replies).joined(separator: "\n")
        #expect(fixture.log.contains("Authorization: Basic [redacted]"))
        for secret in [Self.password, basic, String(basic.prefix { $0 != "=" })] {
            #expect(!everything.contains(secret))
        }
    }
}
