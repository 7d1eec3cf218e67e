import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// The expiry mark (`outbox-expired`) against a wall clock set back: what was reported
/// expired stays expired across a restart, and nothing else is taken for expired.
extension OutboxDeferredTests {
    /// 40 messages accepted to bob and carol, expired at the moment their week is up with
    /// the backend away (all but the active part's four deferred), the outbox stopped, and
    /// the clock then set back to a day after they were accepted.
    static func expiredThenClockSetBack(_ setup: Setup) async throws -> [String] {
        setup.backend.failEverything(.status(503, retryAfter: nil, body: ""))
        let outbox = await setup.outbox()
        let ids = try await setup.accept(40, on: outbox)
        #expect(await eventually { await outbox.nothingUnderWay })
        setup.clock.advance(by: 7 * 86_400)
        #expect(await eventually { await outbox.list().filter { $0.state == .expired }.count == 40 })
        #expect(await eventually { await outbox.outcomes.noneBeingWritten })
        await outbox.shutdown()
        setup.clock.jump(by: -6 * 86_400)
        return ids
    }

    /// What a sender was told expired stays expired after a restart whatever the clock does:
    /// with it set back before their expiry, those never tried, whose records still say
    /// queued, are not sent.
    @Test func whatExpiredStaysExpiredAcrossARestartWithTheClockSetBack() async throws {
        let setup = try await Setup()
        let ids = try await Self.expiredThenClockSetBack(setup)
        setup.backend.failEverything(nil)
        let sentBefore = setup.sendCount
        let outbox = await setup.outbox()
        let listedAfter = await outbox.list()
        #expect(listedAfter.map(\.id) == ids && listedAfter.allSatisfy { $0.state == .expired })
        #expect(listedAfter.filter { $0.error?.message == "not delivered before it expired" }.count == 38,
                "all but the first to each recipient, tried: \(listedAfter.map { "\($0.attempts) \($0.error?.message ?? "-")" })")
        // New messages to both go at once: nothing of theirs waits before them.
        let after = try await outbox.enqueue(to: "bob", message: "after", platforms: [.apns])
            + outbox.enqueue(to: "carol", message: "after", platforms: [.apns])
        try await outbox.committed(after)
        // Listed until delivered, each after whatever of its recipient's waited before it.
        #expect(await eventually { await outbox.list().count == 40 && outbox.summary.waiting == 0 })
        #expect(setup.sendCount - sentBefore == 2, "\(setup.sent(to: "bob") + setup.sent(to: "carol"))")
        await outbox.shutdown()
    }

    /// The mark covers what was accepted before it: a message accepted with the clock set
    /// back, whose expiry falls before the mark's moment, waits as any other.
    @Test func aMessageAcceptedAfterTheMarkIsNotTakenForExpired() async throws {
        let setup = try await Setup()
        _ = try await Self.expiredThenClockSetBack(setup)
        // Back to when the first were accepted: the next expires when they did, at the mark's moment.
        setup.clock.jump(by: -86_400)
        let outbox = await setup.outbox()
        let later = try await outbox.enqueue(to: "bob", message: "later", platforms: [.apns])
        try await outbox.committed(later)
        #expect(await eventually { await outbox.nothingUnderWay })
        await outbox.shutdown()
        let second = await setup.outbox()
        #expect(await second.list().filter { $0.state == .queued }.map(\.id) == later)
        await second.shutdown()
    }

    /// Once the clock is behind the mark (set back after it was written), the mark cannot
    /// say what expires: each record says it, and a message reported expired is not sent
    /// after a restart with the clock set back further.
    @Test func anExpiryWhileTheClockIsBehindTheMarkIsWrittenWhole() async throws {
        let setup = try await Setup()
        _ = try await Self.expiredThenClockSetBack(setup)
        // A day before the first were accepted: the next expire before the mark's moment.
        setup.clock.jump(by: -2 * 86_400)
        let outbox = await setup.outbox()
        let ids = try await outbox.enqueue(to: "dave", message: "tried", platforms: [.apns])
            + outbox.enqueue(to: "dave", message: "never tried", platforms: [.apns])
        try await outbox.committed(ids)
        #expect(await eventually { await outbox.nothingUnderWay && outbox.summary.nextAttemptAt != nil })
        async let told = outbox.wait(for: [ids[1]], untilFinal: true, timeout: 60)
        setup.clock.advance(by: 7 * 86_400)
        #expect(await told.map(\.state) == [.expired], "its sender hears it expired")
        await outbox.shutdown()
        #expect(setup.files.contains("\(ids[1]).json"), "written whole: \(setup.files)")

        setup.clock.jump(by: -7 * 86_400)
        setup.backend.failEverything(nil)
        let second = await setup.outbox()
        #expect(await second.list().first { $0.id == ids[1] }?.state == .expired)
        let after = try await second.enqueue(to: "dave", message: "after", platforms: [.apns])
        try await second.committed(after)
        #expect(await eventually { await second.list().allSatisfy { $0.state != .queued } })
        #expect(setup.sent(to: "dave").filter { $0.contains("never tried") }.isEmpty, "\(setup.sent(to: "dave"))")
        #expect(setup.sent(to: "dave").contains { $0.contains("after") })
        await second.shutdown()
    }

    /// Two messages to bob, the first held in flight, the second behind it expired a week
    /// later, the mark written for it.
    static func inFlightAsTheMarkIsWritten(_ setup: Setup) async throws -> (Outbox, [String]) {
        let (outbox, ids) = try await setup.outboxWithTheFirstHeld(["in flight", "never tried"])
        setup.clock.advance(by: 7 * 86_400)
        #expect(await eventually { await outbox.list().first { $0.id == ids[1] }?.state == .expired })
        #expect(await eventually { await outbox.outcomes.noneBeingWritten })
        return (outbox, ids)
    }

    /// A message in flight when the mark is written is not among what it says expired: the
    /// attempt may end with the clock set back, and the message waits again, never reported
    /// expired. A start finds it tried, and keeps it waiting.
    @Test func aMessageInFlightWhenTheMarkIsWrittenStaysQueuedAcrossARestart() async throws {
        let setup = try await Setup()
        let (outbox, ids) = try await Self.inFlightAsTheMarkIsWritten(setup)
        #expect(FileManager.default.fileExists(atPath: setup.directory.file("outbox-expired")))
        setup.clock.jump(by: -86_400)
        setup.backend.failEverything(.status(503, retryAfter: nil, body: ""))
        setup.backend.release()
        #expect(await eventually {
            let attempts = await outbox.list().first { $0.id == ids[0] }?.attempts
            return await outbox.nothingUnderWay && attempts == 1
        })
        #expect(await outbox.list().first { $0.id == ids[0] }?.state == .queued)
        await outbox.shutdown()

        let second = await setup.outbox()
        let listed = await second.list().first { $0.id == ids[0] }
        #expect(listed?.state == .queued, "\(String(describing: listed))")
        await second.shutdown()
    }

    /// The same when a stop cuts the attempt short (kill -9): its record still says queued
    /// and never tried, as those of the messages that expired do, but the mark written
    /// while it was in flight leaves it out. With the clock set back before its expiry, a
    /// start queues it again.
    @Test func aMessageInFlightWhenTheMarkIsWrittenStaysQueuedWhenAStopCutsItsAttemptShort() async throws {
        let setup = try await Setup()
        let (outbox, ids) = try await Self.inFlightAsTheMarkIsWritten(setup)
        #expect(await outbox.list().first { $0.id == ids[0] }?.state == .queued, "in flight: not reported expired")
        // Stopped here for good: the attempt under way never ends.
        setup.clock.jump(by: -86_400)
        let second = await setup.outbox()
        let listed = await second.list()
        #expect(listed.map(\.state) == [.queued, .expired], "\(listed)")
        await second.shutdown()
        setup.backend.failEverything(.status(503, retryAfter: nil, body: ""))
        setup.backend.release()
    }

    /// A silent notification has no text, so a start that reads its record whole, once it
    /// was tried, must not take it for an index entry read without its text: kept as one,
    /// it would pass for never tried, its expiry left to the mark that covers only records
    /// never tried, and it would be sent after a restart with the clock set back. Its
    /// expiry is written whole, its record read back, and a start lists it as it was tried.
    @Test func aTriedSilentNotificationExpiresWholeAfterARestart() async throws {
        let setup = try await Setup(api: .installations)
        setup.backend.failEverything(.status(503, retryAfter: nil, body: ""))
        let first = await setup.outbox()
        let ids = try await first.enqueue(to: "bob", message: "", platforms: [], options: Outbox.SendOptions(silent: true))
        try await first.committed(ids)
        #expect(await eventually { await first.nothingUnderWay && first.summary.nextAttemptAt != nil })
        #expect(await first.list().map(\.attempts) == [1])
        await first.shutdown()

        setup.clock.advance(by: 8 * 86_400)
        let second = await setup.outbox()
        #expect(await eventually { await second.list().map(\.state) == [.expired] })
        #expect(await eventually { await second.outcomes.noneBeingWritten })
        let told = await second.list()
        #expect(told.map(\.attempts) == [1] && told.first?.error?.message.contains("503") == true,
                "listed as it was tried: \(told.map { "\($0.attempts) \($0.error?.message ?? "-")" })")
        await second.shutdown()

        setup.clock.jump(by: -7 * 86_400)
        setup.backend.failEverything(nil)
        let sentBefore = setup.sendCount
        let third = await setup.outbox()
        let listed = await third.list()
        #expect(listed.map(\.state) == [.expired])
        #expect(listed.map(\.attempts) == [1] && listed.first?.error?.message.contains("503") == true,
                "its record written whole: \(listed.map { "\($0.attempts) \($0.error?.message ?? "-")" })")
        #expect(await third.nothingUnderWay && setup.sendCount == sentBefore, "sent after it was reported expired")
        await third.shutdown()
    }

    /// A message's expiry is the whole second its record says, rounded up from the moment
    /// `outbox_expiry` after its acceptance: the outbox expires it when a start reading the
    /// record would. (Kept to the moment, one accepted at .5 would be past its record's
    /// expiry for half a second before it expired, and a mark written meanwhile, which
    /// covers records by their expiry, would cover it unreported.)
    @Test func anExpiryIsTheWholeSecondItsRecordSays() async throws {
        let setup = try await Setup()
        setup.backend.failEverything(.status(503, retryAfter: nil, body: ""))
        setup.clock.jump(by: 0.5)
        let outbox = await setup.outbox()
        let accepted = setup.clock.now()
        let ids = try await setup.accept(2, on: outbox)
        #expect(await eventually { await outbox.nothingUnderWay })
        // The attempts' outcomes on disk too, before the records are read from another store.
        #expect(await eventually { await outbox.outcomes.noneBeingWritten })
        let expiry = Date(timeIntervalSince1970: (accepted.timeIntervalSince1970 + 7 * 86_400).rounded(.up))
        #expect(await outbox.list().map(\.expiresAt) == [expiry, expiry])
        #expect(OutboxStore(stateDirectory: setup.directory.path).load().0.map(\.expiresAt) == [expiry, expiry], "as the records say")
        setup.clock.advance(by: 7 * 86_400 + 0.3)
        #expect(await outbox.list().map(\.state) == [.queued, .queued], "a second later than the moment, never earlier")
        setup.clock.advance(by: 0.2)
        #expect(await eventually { await outbox.list().map(\.state) == [.expired, .expired] })
        #expect(ids.count == 2)
        await outbox.shutdown()
    }

    /// A message past its expiry when its attempt fails expires once that outcome is
    /// written, after it: written before, the expiry was overwritten by the outcome (queued,
    /// tried), and a restart with the clock set back sent what its sender heard expired.
    @Test func aMessageThatExpiredInFlightIsWrittenExpiredAfterItsOutcome() async throws {
        let setup = try await Setup()
        let (outbox, _) = try await setup.outboxWithTheFirstHeld(["in flight"])
        setup.clock.advance(by: 7 * 86_400 + 1)
        setup.backend.failEverything(.status(503, retryAfter: nil, body: ""))
        setup.backend.release()
        #expect(await eventually { await outbox.list().first?.state == .expired })
        #expect(await eventually { await outbox.nothingUnderWay })
        #expect(await eventually { await outbox.outcomes.noneBeingWritten })
        await outbox.shutdown()
        let onDisk = OutboxStore(stateDirectory: setup.directory.path).load().0
        #expect(onDisk.map(\.state) == [.expired], "\(onDisk.map { "\($0.id) \($0.state), \($0.attempts) attempts" })")

        setup.clock.jump(by: -3 * 86_400)
        setup.backend.failEverything(nil)
        let sentBefore = setup.sendCount
        let second = await setup.outbox()
        #expect(await second.list().map(\.state) == [.expired])
        #expect(await eventually { await second.nothingUnderWay })
        #expect(setup.sendCount == sentBefore, "sent after its sender heard it expired")
        await second.shutdown()
    }
}
