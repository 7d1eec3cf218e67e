import DevBackend
import Foundation
import NotifyCore
import NotifyProtocol
import Testing
import NotifyTestSupport

/// Who a message is sent as, where the password comes from, and what happens when the
/// state directory refuses a write: through the socket, against the dev backend.
@Suite(.stopsFixtures) struct AccountIntegrationTests {
    static func delivered(_ fixture: DaemonFixture) -> [String] {
        fixture.backend.pushes().filter(\.valid).compactMap(\.displayedText)
    }

    @Test func aQueuedMessageIsNeverSentInAnotherUsersName() async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.login("alice")
        try fixture.backend.addFault(.init(route: .send, status: 503))
        let queued = try await fixture.call(SendCommand(to: "carol", message: "secret from alice"))
        #expect(queued.deliveries.first?.state == .queued)

        _ = try await fixture.login("bob")
        let held = try #require(try await fixture.call(OutboxCommand()).deliveries.first)
        #expect(held.state == .queued)
        #expect(held.error?.message.contains("queued by alice, who is no longer logged in") == true)
        fixture.backend.clearFaults()
        let own = try await fixture.call(SendCommand(to: "carol", message: "from bob", wait: true))
        #expect(own.deliveries.first?.state == .delivered)
        // Everything due is tried now, and messages to one recipient go out in order: alice's,
        // were it not held, would go before bob's next one.
        _ = try await fixture.call(OutboxRetryCommand())
        let again = try await fixture.call(SendCommand(to: "carol", message: "again from bob", wait: true))
        #expect(again.deliveries.first?.state == .delivered)
        #expect(Self.delivered(fixture) == ["From bob: from bob", "From bob: again from bob"], "nothing of alice's went out as bob")

        _ = try await fixture.login("alice")
        #expect(await eventually { Self.delivered(fixture).contains("From alice: secret from alice") })
        #expect(!Self.delivered(fixture).contains("From bob: secret from alice"))
        // The entry goes just after the backend's answer, which the test saw first.
        #expect(await eventually { (try? await fixture.call(OutboxCommand()).deliveries.isEmpty) == true })
    }

    @Test func aHeldMessageCanBePurged() async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.login("alice")
        try fixture.backend.addFault(.init(route: .send, status: 503))
        _ = try await fixture.call(SendCommand(to: "carol", message: "secret from alice"))
        _ = try await fixture.call(LogoutCommand())
        let purged = try await fixture.call(OutboxCommand(purge: true))
        #expect(purged.purged == 1)
        #expect(purged.deliveries.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.stateDirectory + "/outbox").isEmpty)
    }

    @Test func thePasswordCommandRunsOnceForConcurrentSends() async throws {
        let runs = "/tmp/nd-runs-" + UUID().uuidString.prefix(8)
        defer { try? FileManager.default.removeItem(atPath: runs) }
        let fixture = try await DaemonFixture(settings: .fast { $0.passwordSource = .command("echo run >> \(runs); sleep 0.2; echo alice") })
        _ = try await fixture.call(LoginCommand(user: "alice", password: nil))
        let states = try await withThrowingTaskGroup(of: DeliveryState?.self) { group in
            for recipient in ["bob", "carol", "dave", "erin", "frank"] {
                group.addTask { try await fixture.call(SendCommand(to: recipient, message: "hi", wait: true)).deliveries.first?.state }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(states == Array(repeating: .delivered, count: 5))
        let count = try String(contentsOfFile: runs, encoding: .utf8).split(separator: "\n").count
        #expect(count == 1, "the password command ran \(count) times for 5 concurrent sends")
    }

    @Test func aPasswordCommandThatFailsOnceIsRetriedNotAStop() async throws {
        let runs = "/tmp/nd-runs-" + UUID().uuidString.prefix(8)
        defer { try? FileManager.default.removeItem(atPath: runs) }
        // Fails its first two runs: the login's check (which then saves the login unchecked,
        // nobody being logged in) and the send's first attempt.
        let command = "n=$(cat \(runs) 2>/dev/null || echo 0); echo $((n + 1)) > \(runs); [ $n -ge 2 ] || exit 7; echo alice"
        let fixture = try await DaemonFixture(settings: .fast {
            $0.retry = Backoff(initial: 1, multiplier: 2, maximum: 2)
            $0.passwordSource = .command(command)
        })
        _ = try await fixture.call(LoginCommand(user: "alice", password: nil))
        let sent = try #require(try await fixture.call(SendCommand(to: "bob", message: "hi")).deliveries.first)
        // Queued for a retry (or, on a slow machine, already retried and delivered): not failed.
        #expect(sent.state == .queued || (sent.state == .delivered && sent.attempts == 2), "\(sent)")
        if sent.state == .queued {
            #expect(sent.error?.message.contains("exit status 7") == true)
        }
        #expect(await eventually { Self.delivered(fixture) == ["From alice: hi"] })
        #expect(try await fixture.status().account?.passwordProblem == nil, "cleared once the command worked")
    }

    @Test func aSendThatCannotBePersistedIsRefusedAndNotSent() async throws {
        let fixture = try await DaemonFixture(backendOptions: TutorialVariant.updatedForFCMv1.backendOptions())
        _ = try await fixture.login("alice")
        // A file where the outbox directory goes: nothing can be saved there, even by root.
        let outbox = fixture.stateDirectory + "/outbox"
        try? FileManager.default.removeItem(atPath: outbox)
        #expect(FileManager.default.createFile(atPath: outbox, contents: Data()))
        let refused = try await fixture.callExpectingError(SendCommand(to: "bob", message: "hi", pns: ["apns", "fcm"]))
        #expect(refused.message.contains("outbox"))
        #expect(try await fixture.call(OutboxCommand()).deliveries.isEmpty)

        try FileManager.default.removeItem(atPath: outbox)
        let sent = try await fixture.call(SendCommand(to: "bob", message: "hi", pns: ["apns", "fcm"]))
        #expect(sent.deliveries.map(\.state) == [.delivered, .delivered])
        // Messages to one recipient go out in order: the refused one would have gone first.
        #expect(fixture.count(.send) == 2, "the refused message was not sent")
    }

    @Test func aTokenThatCannotBeSavedIsNotShown() async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.login("alice")
        _ = try await fixture.call(SetTokenCommand(token: "ABCD"))
        let state = fixture.stateDirectory + "/state.json"
        try FileManager.default.removeItem(atPath: state)
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        let refused = try await fixture.callExpectingError(SetTokenCommand(token: "EF01"))
        #expect(refused.message.contains("state.json"))
        #expect(try await fixture.status().device.token == "ABCD")
        #expect(fixture.backend.registrations().map(\.handle) == ["ABCD"])

        try FileManager.default.removeItem(atPath: state)
        #expect(try await fixture.call(SetTokenCommand(token: "EF01")).registration.state == .registered)
        #expect(fixture.backend.registrations().map(\.handle) == ["EF01"])
    }

    /// Android's three names are one platform at the backend.
    @Test func fcmv1FcmAndGcmPostOnce() async throws {
        let fixture = try await DaemonFixture(backendOptions: TutorialVariant.updatedForFCMv1.backendOptions())
        _ = try await fixture.login("alice")
        let sent = try await fixture.call(SendCommand(to: "bob", message: "once", pns: ["fcmv1", "fcm", "gcm"], wait: true))
        #expect(sent.deliveries.map(\.state) == [.delivered])
        #expect(fixture.count(.send) == 1)
    }
}
