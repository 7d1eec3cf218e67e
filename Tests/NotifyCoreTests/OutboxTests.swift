import Foundation
import NotifyProtocol
import Synchronization
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
        let settings: SettingsStore
        let accounts: AccountKeeper
        let outbox: Outbox
        /// How often the outbox said it had nothing left to send.
        let emptied: CallCount

        init(user: String = "alice") async throws {
            directory = try ScratchDirectory()
            let settings = SettingsStore(.init(backend: OutboxTests.backend, policy: RegistrationPolicy(backoff: Backoff(initial: 10, multiplier: 2, maximum: 60))))
            self.settings = settings
            let emptied = CallCount()
            self.emptied = emptied
            // Built as the daemon builds it; only the outbox is started.
            let components = Components(settings: settings, stateDirectory: directory.path, backend: backend, clock: clock, logger: .silent,
                                        onOutboxEmptied: { emptied.add() })
            accounts = components.accounts
            try await accounts.commit(Credentials(user: user, password: user, backend: nil))
            outbox = components.outbox
            await outbox.start()
        }

        func send(_ message: String, to: String = "bob", _ platforms: [Platform] = [.apns]) async throws -> [DeliveryStatus] {
            let ids = try await outbox.submit(to: to, message: message, platforms: platforms)
            return await outbox.wait(for: ids, untilFinal: false, timeout: 10)
        }

        /// `count` messages to bob, pipelined as a burst of sends is: accepted together, then
        /// sent one at a time in order.
        func acceptedBurst(_ count: Int) async throws -> [String] {
            var ids: [String] = []
            for number in 1...count {
                ids += try await outbox.enqueue(to: "bob", message: "message \(number)", platforms: [.apns])
            }
            try await outbox.committed(ids)
            return ids
        }

        /// An `acceptedBurst` whose first message is held at the backend until `backend.release()`.
        func acceptedBurstWithTheFirstHeld(_ count: Int) async throws -> [String] {
            backend.holdNext("send")
            let ids = try await acceptedBurst(count)
            #expect(await eventually { backend.isHolding })
            return ids
        }

        var nothingUnderWay: Bool {
            get async { await outbox.nothingUnderWay }
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
        // Its failure is written just after it is listed.
        #expect(await eventually { fixture.files == [second[0].id + ".json"] })
        #expect(await fixture.outbox.purge() == 1)
        #expect(fixture.files.isEmpty)
    }

    @Test func aBurstOfSendsArmsTheTimerOnceAndKeepsNothingOnceAnswered() async throws {
        // A cancelled sleep holds its system timer until its deadline, a week away for an
        // expiry: one armed per pass would pile up memory with every message sent.
        let fixture = try await Fixture()
        // They go out one at a time, the rest wait queued.
        let ids = try await fixture.acceptedBurst(50)
        let statuses = await fixture.outbox.wait(for: ids, untilFinal: true, timeout: 60)
        #expect(statuses.map(\.state) == Array(repeating: .delivered, count: 50))
        #expect(fixture.backend.calls.count == 50)
        #expect(fixture.clock.sleepsStarted <= 2, "\(fixture.clock.sleepsStarted) sleeps for 50 sends")
        #expect(await fixture.outbox.unansweredStatusCount == 0, "every sender has its answer: nothing kept for them")
    }

    @Test func theOutboxSaysOnceWhenABurstHasGoneOut() async throws {
        let fixture = try await Fixture()
        let ids = try await fixture.acceptedBurstWithTheFirstHeld(3)
        // A turn of the outbox after the first went out: all three are still its own.
        #expect(await fixture.outbox.list().count == 3)
        #expect(fixture.emptied.value == 0, "the first is still being sent")
        fixture.backend.release()
        let statuses = await fixture.outbox.wait(for: ids, untilFinal: true, timeout: 60)
        #expect(statuses.map(\.state) == [.delivered, .delivered, .delivered])
        #expect(await eventually { fixture.emptied.value == 1 }, "once, when the last went out")
    }

    /// The tables that tracked a burst do not keep its size once it is over: a thousand
    /// sends would otherwise pin their heap pages for the rest of the daemon's life.
    @Test func aBurstLeavesNoTableSizedForIt() async throws {
        let fixture = try await Fixture()
        let ids = try await fixture.acceptedBurstWithTheFirstHeld(200)
        #expect(await fixture.outbox.queue.queued.capacity >= 200, "sized for the burst while it lasts")
        let answer = LaterAnswer(fixture, ids)
        #expect(await eventually { await fixture.outbox.waiters.all.capacity > 0 })
        fixture.backend.release()
        // Two hundred sends to one recipient go one after another: on a loaded machine
        // that takes a while, and only a stall of the sends fails the test.
        #expect(await eventually(progressing: { fixture.backend.calls.count }) { answer.value != nil })
        #expect(answer.value?.allSatisfy { $0.state == .delivered } == true)
        #expect(await eventually { fixture.emptied.value == 1 })
        #expect(await fixture.outbox.queue.queued.capacity == 0)
        #expect(await fixture.outbox.waiters.all.capacity == 0)
        #expect(await fixture.outbox.outcomes.unanswered.capacity == 0)
    }

    /// A wait in the background, as a sender's, with a deadline far beyond the test's.
    final class LaterAnswer: Sendable {
        private let statuses = Mutex<[DeliveryStatus]?>(nil)
        var value: [DeliveryStatus]? { statuses.withLock { $0 } }

        init(_ fixture: Fixture, _ ids: [String]) {
            Task {
                let answer = await fixture.outbox.wait(for: ids, untilFinal: false, timeout: 600)
                self.statuses.withLock { $0 = answer }
            }
        }
    }

    @Test func aRetryAnswersTheSendersOfTheMessagesQueuedBehindIt() async throws {
        let fixture = try await Fixture()
        let ids = try await fixture.acceptedBurstWithTheFirstHeld(3)
        let behind = LaterAnswer(fixture, Array(ids.dropFirst()))
        // Waiting, so not answered on arrival; and nothing but the held send can answer it now.
        #expect(await eventually { await fixture.outbox.waiters.all.count == 1 }, "the first is still being sent")
        #expect(behind.value == nil, "the first is still being sent")

        // The first fails for now: the two behind it wait for its retry, and their
        // senders hear "queued" at once, not when their own wait runs out.
        fixture.backend.answerNextSends([.status(503, retryAfter: nil, body: "")])
        fixture.backend.release()
        #expect(await eventually { behind.value != nil })
        #expect(behind.value?.map(\.state) == [.queued, .queued])
    }

    @Test func aSendAsAnotherAccountAnswersTheSendersOfTheMessagesItHolds() async throws {
        let fixture = try await Fixture()
        let ids = try await fixture.acceptedBurstWithTheFirstHeld(2)
        let second = LaterAnswer(fixture, [ids[1]])
        // Waiting, so not answered on arrival; and nothing but the held send can answer it now.
        #expect(await eventually { await fixture.outbox.waiters.all.count == 1 })
        #expect(second.value == nil)

        // Carol logs in and sends before the outbox heard of the login: alice's second
        // message is held from then on, and its sender is told so at once.
        try await fixture.accounts.commit(Credentials(user: "carol", password: "carol", backend: nil))
        _ = try await fixture.outbox.submit(to: "dave", message: "from carol", platforms: [.apns])
        #expect(await eventually { second.value != nil })
        #expect(second.value?.first?.error?.message.contains("alice") == true)
        fixture.backend.release()
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
        #expect(await fixture.nothingUnderWay, "a copy is being sent")
        #expect(fixture.backend.calls.isEmpty, "no copy went out")

        try FileManager.default.removeItem(atPath: blocker)
        let sent = try await fixture.send("hello", [.apns, .fcm])
        #expect(sent.map(\.state) == [.delivered, .delivered])
        // A delivered message's removal is written after its sender hears.
        #expect(await eventually { fixture.files.isEmpty })
    }

    /// Once writes work, a message goes to the backend while it is written. When its write
    /// fails after all, its sender hears so, and that the backend may have it; nothing is
    /// kept or sent again, and the next message waits for its write again.
    @Test func aWriteThatFailsWhileItsMessageIsSentIsToldWithThat() async throws {
        let fixture = try await Fixture()
        #expect(try await fixture.send("first", [.apns, .fcm]).map(\.state) == [.delivered, .delivered])
        // Its removal is written after its sender hears.
        #expect(await eventually { fixture.files.isEmpty })
        let blocker = fixture.directory.file("outbox/batch-0000000004-fcm.json")
        try FileManager.default.createDirectory(atPath: blocker, withIntermediateDirectories: true)
        do {
            _ = try await fixture.send("second", [.apns, .fcm])
            Issue.record("a send that could not be saved was accepted")
        } catch {
            #expect("\(error)".contains("may have been delivered"), "\(error)")
        }
        #expect(fixture.backend.calls.count == 4, "sent while it was being written")
        #expect(await fixture.outbox.list().isEmpty)
        #expect(fixture.files == ["batch-0000000004-fcm.json"], "nothing but the blocker")
        #expect(await fixture.nothingUnderWay, "being sent again")
        #expect(fixture.backend.calls.count == 4, "not sent again")

        // The next write fails too: this time nothing goes before it.
        let second = fixture.directory.file("outbox/batch-0000000006-fcm.json")
        try FileManager.default.createDirectory(atPath: second, withIntermediateDirectories: true)
        await #expect(throws: CoreError.self) { try await fixture.send("third", [.apns, .fcm]) }
        #expect(await fixture.nothingUnderWay, "being sent though the write before it had failed")
        #expect(fixture.backend.calls.count == 4, "not sent: the write before it had failed")
    }

    /// A message still on its way when its write fails is forgotten when it comes back:
    /// an outage is not retried for a message its sender was told failed.
    @Test func aMessageOnItsWayWhenItsWriteFailsIsNotRetried() async throws {
        let fixture = try await Fixture()
        #expect(try await fixture.send("first").map(\.state) == [.delivered])
        // Its removal is written after its sender hears.
        #expect(await eventually { fixture.files.isEmpty })
        let blocker = fixture.directory.file("outbox/0000000002-apns.json")
        try FileManager.default.createDirectory(atPath: blocker, withIntermediateDirectories: true)
        fixture.backend.holdNext("send")
        fixture.backend.answerNextSends([.status(503, retryAfter: nil, body: "")])
        do {
            _ = try await fixture.send("second")
            Issue.record("a send that could not be saved was accepted")
        } catch {
            #expect("\(error)".contains("may have been delivered"), "\(error)")
        }
        #expect(await eventually { fixture.backend.isHolding })
        fixture.backend.release()
        // Its answer is in once nothing is under way; a retry would have begun with it.
        #expect(await eventually { await fixture.nothingUnderWay })
        #expect(fixture.backend.calls.count == 2, "answered 503, and not retried")
        #expect(await fixture.outbox.list().isEmpty)
        #expect(fixture.files == ["0000000002-apns.json"], "nothing but the blocker")
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
        // Any retry is due now. A pass takes what is ready in the order it was queued, so
        // alice's message, were it not held, would start no later than bob's to the same
        // recipient; once that is delivered and nothing is under way, it would be in the calls.
        #expect(try await fixture.send("again from bob").map(\.state) == [.delivered])
        #expect(await eventually { await fixture.nothingUnderWay })
        #expect(fixture.backend.users.dropFirst(attemptsAsAlice) == ["bob", "bob"], "only bob's own messages went out as bob")
        #expect(await fixture.outbox.list().map(\.id) == queued.map(\.id))

        try await fixture.accounts.commit(Credentials(user: "alice", password: "alice", backend: nil))
        await fixture.outbox.accountChanged()
        #expect(await eventually { await fixture.outbox.list().isEmpty })
        #expect(fixture.backend.users.last == "alice")
    }
}

/// How often a callback was called, from whichever thread.
final class CallCount: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
    func add() { count.add(1, ordering: .relaxed) }
}

extension Outbox {
    /// No attempt under way: none running and no lane handing one out. A message sent
    /// before is in the backend's calls; one not sent can go only when the outbox takes it
    /// up again (a wake, a send, an answer).
    var nothingUnderWay: Bool { attempts.isEmpty && lanes.isEmpty }
}
