import DevBackend
import Foundation
import NotifyClient
import NotifyCore
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

    /// A 200 to the registration request whose id carries the password, a terminal's
    /// escape sequence, a newline that would forge a log line, or 60 KB: a bad reply. Nothing
    /// is stored, the id reaches no log line, reply or state file, and the next attempt waits
    /// for the backoff (here ten minutes), so a backend that keeps answering so gets one
    /// request per backoff step, not a storm.
    @Test(arguments: [
        "8499338226434223-\(password)-2",
        "8499\u{1B}]0;owned\u{07}\u{1B}[2J-2",
        "8499-2\n2026-01-01T00:00:00Z notifyd[1] notice: logged in as root",
        String(repeating: "7", count: 60_000),
    ])
    func aRegistrationIdOfTheWrongShapeIsABadReplyAndIsNotKept(id: String) async throws {
        let slow = RegistrationPolicy(refreshInterval: 3600, backoff: Backoff(initial: 600, multiplier: 2, maximum: 1200), debounce: 0.01, maximumDebounce: 0.2)
        let fixture = try await DaemonFixture(settings: .fast { $0.policy = slow }, backendOptions: .init(quiet: true, accounts: ["carol": Self.password]))
        let body = String(decoding: try JSONEncoder().encode(id), as: UTF8.self)
        _ = try await fixture.login("carol", password: Self.password)
        let loginChecks = fixture.count(.create)
        try fixture.backend.addFault(.init(route: .create, status: 200, count: 1, body: body))
        let outcome = try await fixture.call(SetTokenCommand(token: "ABCD"))
        let registration = outcome.registration
        #expect(registration.state == .retrying)
        #expect(registration.id == nil)
        #expect(registration.message?.contains("neither used nor kept") == true, "\(registration.message ?? "")")
        #expect(registration.failures == 1)
        let waited = try #require(registration.nextAttemptAt).timeIntervalSince(try #require(registration.lastAttemptAt))
        #expect(waited >= 300, "the retry waits for the backoff")
        #expect(fixture.count(.create) - loginChecks == 1)

        let raw = try await onThread { () -> String in
            try "\(NotifyClient(socketPath: fixture.socketPath).call(StatusCommand()).raw)"
        }
        let state = (try? String(contentsOfFile: fixture.stateDirectory + "/state.json", encoding: .utf8)) ?? ""
        #expect(!state.contains("8499"))
        #expect(!state.contains("7777"))
        for text in [fixture.log, raw, state, registration.message ?? ""] {
            #expect(!text.contains(Self.password))
            #expect(!text.contains("\u{1B}") && !text.contains("\u{07}"))
        }
        #expect(!fixture.log.split(separator: "\n").contains { $0.hasPrefix("2026-01-01") }, "no forged log line")
        #expect(!fixture.log.contains(String(repeating: "7", count: 100)))
    }

    /// A registration reply of 1 MB, where the backend's replies are a few bytes: notifyd
    /// reads 64 KiB of it and no further, and says why the registration failed.
    @Test func aReplyPastTheBoundIsNotReadOnAndStatusSaysWhy() async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .create, status: 200, count: 1, body: String(repeating: "x", count: 1 << 20)))
        let outcome = try await fixture.call(SetTokenCommand(token: "ABCD"))
        #expect(outcome.registration.message?.contains("the backend's reply is larger than 64 KiB") == true, "\(outcome.registration)")
    }

    /// Honoured past `retry_max` (0.2 s here), up to 30 min.
    @Test func aHugeRetryAfterIsCappedAt30MinutesAndStatusSaysSo() async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .create, status: 503, retryAfter: 999_999_999, count: 1))
        let before = Date()
        let outcome = try await fixture.call(SetTokenCommand(token: "ABCD"))
        #expect(outcome.registration.state == .retrying)
        #expect(outcome.registration.message?.contains("the backend asked to wait 999999999 s, capped at the larger of retry_max and 30 min (1800 s)") == true)
        let next = try #require(outcome.registration.nextAttemptAt)
        #expect(next.timeIntervalSince(before) > 1790 && next.timeIntervalSince(before) < 1810)
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
