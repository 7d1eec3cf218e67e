import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// The outbox actor with real files, a scripted backend, a clock the test moves, and the
/// account keeper it asks for credentials.
struct OutboxTests {
    static let backend = "http://127.0.0.1:1"

    final class Fixture: Sendable {
        let directory: ScratchDirectory
        let backend = FakeBackend()
        let clock = ManualClock()
        let accounts: AccountKeeper
        let outbox: Outbox

        init(user: String = "alice") async throws {
            directory = try ScratchDirectory()
            accounts = AccountKeeper(stateDirectory: directory.path, configuredBackend: OutboxTests.backend, passwords: PasswordProvider(source: .stored))
            try await accounts.commit(Credentials(user: user, password: user, backend: nil))
            outbox = Outbox(settings: .init(backoff: Backoff(initial: 10, multiplier: 2, maximum: 60)), stateDirectory: directory.path,
                            backend: backend, clock: clock, logger: .silent, accounts: accounts)
            await outbox.start()
        }

        func send(_ message: String, to: String = "bob", _ platforms: [Platform] = [.apns]) async throws -> [DeliveryStatus] {
            let ids = try await outbox.submit(to: to, message: message, platforms: platforms)
            return await outbox.wait(for: ids, untilFinal: false, timeout: 10)
        }

        var files: [String] { (try? FileManager.default.contentsOfDirectory(atPath: directory.file("outbox")).sorted()) ?? [] }

        deinit { directory.remove() }
    }

    @Test func aMessageToldQueuedIsKeptWhenItsFirstAttemptIsRefused() async throws {
        let fixture = try await Fixture()
        // The first message meets an outage; the second waits behind it, and is refused
        // on its first attempt once the first went out.
        fixture.backend.answerNextSends([.status(503, retryAfter: nil, body: ""), nil, .status(400, retryAfter: nil, body: "")])
        #expect(try await fixture.send("first").map(\.state) == [.queued])
        let second = try await fixture.send("second")
        #expect(second.map(\.state) == [.queued], "waiting behind the first")

        #expect(await eventually { fixture.clock.sleeperCount == 1 })
        fixture.clock.advance(by: 10)
        #expect(await eventually { fixture.backend.calls.count == 3 })
        #expect(await eventually { await fixture.outbox.list().map(\.state) == [.failed] })
        let listed = await fixture.outbox.list()
        #expect(listed.map(\.id) == second.map(\.id), "told queued, so listed until purged")
        #expect(listed.first?.error?.message.contains("HTTP 400") == true)
        #expect(fixture.files == [second[0].id + ".json"])
        #expect(await fixture.outbox.purge() == 1)
        #expect(fixture.files.isEmpty)
    }

    @Test func aRefusalTheSenderStillWaitsForIsItsAnswerAndNotKept() async throws {
        let fixture = try await Fixture()
        fixture.backend.answerNextSends([.status(400, retryAfter: nil, body: "")])
        #expect(try await fixture.send("hi").map(\.state) == [.failed])
        #expect(await fixture.outbox.list().isEmpty)
        #expect(fixture.files.isEmpty)
    }

    @Test func fcmAndGcmAreOneSend() async throws {
        let fixture = try await Fixture()
        let sent = try await fixture.send("hello", [.fcm, .gcm])
        #expect(sent.count == 1)
        #expect(sent.map(\.state) == [.delivered])
        #expect(fixture.backend.calls.count == 1)
        let direct = try await fixture.outbox.sendOnce(to: "bob", message: "hello", platforms: [.gcm, .fcm])
        #expect(direct.count == 1)
        #expect(fixture.backend.calls.count == 2)
    }

    @Test func copiesThatCannotAllBeSavedAreNeitherKeptNorSent() async throws {
        let fixture = try await Fixture()
        // The copies of one message are written together, as one batch file: a directory
        // where that file goes means neither copy can be saved.
        let blocker = fixture.directory.file("outbox/batch-0000000002-fcm.json")
        try FileManager.default.createDirectory(atPath: blocker, withIntermediateDirectories: true)
        await #expect(throws: CoreError.self) { try await fixture.send("hello", [.apns, .fcm]) }
        #expect(await fixture.outbox.list().isEmpty)
        #expect(fixture.files == ["batch-0000000002-fcm.json"], "nothing but the blocker")
        try await Task.sleep(for: .milliseconds(50))
        #expect(fixture.backend.calls.isEmpty, "no copy went out")

        try FileManager.default.removeItem(atPath: blocker)
        let sent = try await fixture.send("hello", [.apns, .fcm])
        #expect(sent.map(\.state) == [.delivered, .delivered])
        #expect(fixture.files.isEmpty)
    }

    @Test func aMessageIsSentAsTheAccountThatQueuedItOrHeld() async throws {
        let fixture = try await Fixture()
        fixture.backend.failEverything(.transport("connection refused"))
        let queued = try await fixture.send("secret from alice")
        #expect(queued.map(\.state) == [.queued])

        let attemptsAsAlice = fixture.backend.users.count
        try await fixture.accounts.commit(Credentials(user: "bob", password: "bob", backend: nil))
        await fixture.outbox.accountChanged()
        fixture.backend.failEverything(nil)
        let held = try #require(await fixture.outbox.list().first)
        #expect(held.state == .queued)
        #expect(held.error?.message.contains("queued by alice, who is no longer logged in") == true)
        #expect(held.nextAttemptAt == nil)
        #expect(try await fixture.send("from bob", to: "carol").map(\.state) == [.delivered])
        fixture.clock.advance(by: 3600)
        try await Task.sleep(for: .milliseconds(50))
        #expect(fixture.backend.users.dropFirst(attemptsAsAlice) == ["bob"], "only bob's own message went out as bob")
        #expect(await fixture.outbox.list().map(\.id) == queued.map(\.id))

        try await fixture.accounts.commit(Credentials(user: "alice", password: "alice", backend: nil))
        await fixture.outbox.accountChanged()
        #expect(await eventually { await fixture.outbox.list().isEmpty })
        #expect(fixture.backend.users.last == "alice")
    }
}
