import DevBackend
import Foundation
import NotifyCore
import NotifyProtocol
import Testing
import NotifyTestSupport

/// `outbox-retry`, `outbox-cancel` and the outbox counts in `status`.
@Suite(.stopsFixtures) struct OutboxControlTests {
    /// Retries an hour apart: only `outbox-retry` can make a second attempt happen in a test.
    static let slow = RuntimeSettings.fast { $0.retry = Backoff(initial: 3600, multiplier: 2, maximum: 3600) }

    static func loggedIn() async throws -> DaemonFixture {
        let fixture = try await DaemonFixture(settings: slow)
        _ = try await fixture.login()
        return fixture
    }

    @Test func statusCountsWhatWaitsAndWhenItIsTriedNext() async throws {
        let fixture = try await Self.loggedIn()
        #expect(try await fixture.status().outbox == OutboxSummary(waiting: 0, held: 0, failed: 0, limit: RuntimeSettings.defaultOutboxMax,
                                                                     bytes: 0, bytesLimit: RuntimeSettings.defaultOutboxMaxBytes))
        try fixture.backend.addFault(.init(route: .send, status: 503))
        _ = try await fixture.call(SendCommand(to: "bob", message: "one"))
        _ = try await fixture.call(SendCommand(to: "carol", message: "two"))
        let outbox = try #require(try await fixture.status().outbox)
        #expect(outbox.waiting == 2)
        #expect(outbox.held == 0)
        #expect(outbox.failed == 0)
        #expect(outbox.nextAttemptAt != nil)
        await fixture.stop()
    }

    /// Logged in, `outbox_max = 3`, and every send answered 503 (retried an hour later).
    static func roomForThreeWithTheBackendRefusingSends() async throws -> DaemonFixture {
        let fixture = try await DaemonFixture(settings: RuntimeSettings.fast {
            $0.retry = Backoff(initial: 3600, multiplier: 2, maximum: 3600)
            $0.outboxMax = 3
        })
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .send, status: 503))
        return fixture
    }

    /// Sends pipelined in one write fill the outbox before any of them is queued: the one
    /// past the bound still names whom the outbox waits for.
    @Test func aBurstInOneWritePastTheBoundNamesWhomTheOutboxWaitsFor() async throws {
        let fixture = try await Self.roomForThreeWithTheBackendRefusingSends()
        let path = fixture.socketPath
        let replies = try await onThread { () -> [JSONValue?] in
            let connection = try RawConnection(path: path)
            try connection.send((1...4).map { #"{"id":\#($0),"cmd":"send","to":"\#($0 == 2 ? "carol" : "bob")","message":"m\#($0)"}"# + "\n" }.joined())
            return (1...4).map { _ in connection.receive() }
        }
        let refused = try #require(replies.first { $0?["error"] != nil } ?? nil, "\(replies)")
        #expect(refused["error"]?["code"] == .string("outbox_full"))
        #expect(refused["error"]?["message"]?.stringValue?.contains("3 messages waiting for bob (2), carol (1) (outbox_max = 3)") == true, "\(refused)")
        await fixture.stop()
    }

    /// Past `outbox_max`, a send is refused with whom the queue waits for, and nothing
    /// queued is dropped: once the backend is back, those go out, and there is room again.
    @Test func pastTheBoundASendIsRefusedAndNothingQueuedIsDropped() async throws {
        let fixture = try await Self.roomForThreeWithTheBackendRefusingSends()
        for (to, text) in [("bob", "one"), ("carol", "two"), ("bob", "three")] {
            #expect(try await fixture.call(SendCommand(to: to, message: text)).deliveries.first?.state == .queued)
        }
        #expect(try await fixture.status().outbox?.limit == 3)
        let refused = try await fixture.callExpectingError(SendCommand(to: "dave", message: "four"))
        #expect(refused.code == .outboxFull)
        #expect(refused.message.contains("the outbox is full: 3 messages waiting for bob (2), carol (1) (outbox_max = 3)"), "\(refused.message)")
        #expect(try await fixture.call(OutboxCommand()).deliveries.compactMap(\.preview) == ["one", "two", "three"], "none dropped")

        fixture.backend.clearFaults()
        #expect(try await fixture.call(OutboxRetryCommand()).retried == 3)
        #expect(await eventually { fixture.backend.pushes().count == 3 })
        #expect(fixture.backend.pushes().compactMap(\.displayedText).sorted() == ["From alice: one", "From alice: three", "From alice: two"])
        #expect(await eventually { (try? await fixture.call(OutboxCommand()).deliveries.isEmpty) == true })
        #expect(try await fixture.call(SendCommand(to: "dave", message: "four")).deliveries.first?.state == .delivered, "room again")
        await fixture.stop()
    }

    /// A page of the outbox: at most `limit` entries in id order, where the next page
    /// starts, and the counts per recipient that stand for the rest; without `limit`,
    /// every entry, as before.
    @Test func theOutboxIsListedByPagesWithCountsPerRecipient() async throws {
        let fixture = try await Self.loggedIn()
        try fixture.backend.addFault(.init(route: .send, status: 503))
        for index in 1...5 { _ = try await fixture.call(SendCommand(to: index % 2 == 0 ? "carol" : "bob", message: "m\(index)")) }
        let first = try await fixture.call(OutboxCommand(limit: 2))
        #expect(first.deliveries.compactMap(\.preview) == ["m1", "m2"])
        #expect(first.total == 5)
        let next = try #require(first.nextAfter)
        #expect(first.recipients?.map(\.to) == ["bob", "carol"])
        #expect(first.recipients?.map(\.waiting) == [3, 2])
        #expect(first.recipients?.allSatisfy { $0.nextAttemptAt != nil } == true)
        let second = try await fixture.call(OutboxCommand(limit: 2, after: next))
        #expect(second.deliveries.compactMap(\.preview) == ["m3", "m4"])
        let afterSecond = try #require(second.nextAfter)
        let last = try await fixture.call(OutboxCommand(limit: 2, after: afterSecond))
        #expect(last.deliveries.compactMap(\.preview) == ["m5"])
        #expect(last.nextAfter == nil, "the end")
        let everything = try await fixture.call(OutboxCommand())
        #expect(everything.deliveries.count == 5 && everything.total == nil && everything.recipients == nil)
        // The number people read off the list marks the place as well as the whole id.
        let number = String(try #require(Int(next.prefix { $0 != "-" })))
        #expect(try await fixture.call(OutboxCommand(limit: 2, after: number)).deliveries.compactMap(\.preview) == ["m3", "m4"])
        let platform = next.drop { $0 != "-" }
        #expect(try await fixture.call(OutboxCommand(limit: 2, after: number + platform)).deliveries.compactMap(\.preview) == ["m3", "m4"])
        for bad in ["zzz", "-5", "12-", ""] {
            await #expect(throws: Error.self, "\(bad)") { try await fixture.call(OutboxCommand(limit: 2, after: bad)) }
        }
        await #expect(throws: Error.self) { try await fixture.call(OutboxCommand(limit: 0)) }
        // The largest number there is: after everything, and notifyd lives on.
        #expect(try await fixture.call(OutboxCommand(limit: 2, after: String(Int.max))).deliveries.isEmpty)
        await #expect(throws: Error.self, "more than any number: refused") { try await fixture.call(OutboxCommand(limit: 2, after: "99999999999999999999")) }
        await fixture.stop()
    }

    @Test func messagesHeldForCredentialsAreCountedApart() async throws {
        let fixture = try await DaemonFixture()
        _ = try await fixture.login()
        try fixture.backend.addFault(.init(route: .send, status: 503, count: 1))
        try fixture.backend.addFault(.init(route: .send, status: 403))
        _ = try await fixture.call(SendCommand(to: "bob", message: "accepted earlier"))
        #expect(await eventually { (try? await fixture.status().outbox?.held) == 1 })
        let outbox = try #require(try await fixture.status().outbox)
        #expect(outbox.waiting == 0)
        #expect(outbox.nextAttemptAt == nil, "nothing is tried before the next login")
        // One sent meanwhile is held with it, and its sender hears why and what to do.
        let later = try await fixture.call(SendCommand(to: "carol", message: "sent after the refusal"))
        let held = try #require(later.deliveries.first)
        #expect(held.state == .queued && held.nextAttemptAt == nil)
        #expect(held.error?.message.contains("refused the credentials of 'alice'") == true, "\(held)")
        #expect(held.error?.message.contains("notifyctl login alice") == true, "\(held)")
        #expect(try await fixture.status().outbox?.held == 2)
        await fixture.stop()
    }

    @Test func retrySendsAWaitingMessageNow() async throws {
        let fixture = try await Self.loggedIn()
        try fixture.backend.addFault(.init(route: .send, status: 503, count: 1))
        let queued = try await fixture.call(SendCommand(to: "bob", message: "after the outage"))
        #expect(queued.deliveries.first?.state == .queued)
        let retried = try await fixture.call(OutboxRetryCommand(delivery: queued.deliveries.first?.id))
        #expect(retried.retried == 1)
        #expect(await eventually { fixture.backend.pushes().filter(\.valid).count == 1 })
        // The file goes just after the backend's answer.
        #expect(await eventually { (try? await fixture.call(OutboxCommand()).deliveries.isEmpty) == true })
        await fixture.stop()
    }

    @Test func retryWithoutAnIdReleasesMessagesHeldForCredentials() async throws {
        let fixture = try await Self.loggedIn()
        try fixture.backend.addFault(.init(route: .send, status: 503, count: 1))
        try fixture.backend.addFault(.init(route: .send, status: 403, count: 1))
        _ = try await fixture.call(SendCommand(to: "bob", message: "held"))
        _ = try await fixture.call(OutboxRetryCommand())
        #expect(await eventually { (try? await fixture.status().outbox?.held) == 1 })
        // The password was fixed at the backend: trying again needs no new login.
        _ = try await fixture.call(OutboxRetryCommand())
        #expect(await eventually { fixture.backend.pushes().filter(\.valid).count == 1 })
        await fixture.stop()
    }

    @Test func cancelRemovesAMessageForGood() async throws {
        let fixture = try await Self.loggedIn()
        try fixture.backend.addFault(.init(route: .send, status: 503))
        let queued = try await fixture.call(SendCommand(to: "bob", message: "never mind"))
        let id = try #require(queued.deliveries.first?.id)
        let cancelled = try await fixture.call(OutboxCancelCommand(delivery: id))
        #expect(cancelled.delivery.state == .cancelled)
        #expect(try await fixture.call(OutboxCommand()).deliveries.isEmpty)
        #expect(try await fixture.status().outbox?.waiting == 0)
        #expect(!FileManager.default.fileExists(atPath: fixture.stateDirectory + "/outbox/\(id).json"), "gone from disk too")
        fixture.backend.clearFaults()
        // A later message to bob waits behind the outage as the cancelled one did; a retry
        // sends what waits in order, so the cancelled one would go before it.
        _ = try await fixture.call(SendCommand(to: "bob", message: "after the cancel"))
        _ = try await fixture.call(OutboxRetryCommand())
        #expect(await eventually { fixture.backend.pushes().contains { $0.displayedText == "From alice: after the cancel" } })
        #expect(fixture.backend.pushes().compactMap(\.displayedText) == ["From alice: after the cancel"])
        await fixture.stop()
    }

    /// An id names one message for the life of the state directory. The outbox was emptied
    /// (everything delivered) and notifyd restarted: a new message must not take the id of
    /// a delivered one, or `outbox cancel` with the old id would drop it.
    @Test func anIdIsNeverGivenAgainAfterARestartWithAnEmptyOutbox() async throws {
        let first = try await Self.loggedIn()
        let delivered = try #require(try await first.call(SendCommand(to: "bob", message: "before the restart")).deliveries.first)
        #expect(delivered.state == .delivered)
        #expect(try await first.call(OutboxCommand()).deliveries.isEmpty)
        await first.daemon.stop()

        let second = try await DaemonFixture(settings: Self.slow, stateDirectory: first.stateDirectory, sharing: first.backend)
        try second.backend.addFault(.init(route: .send, status: 503))
        let queued = try #require(try await second.call(SendCommand(to: "bob", message: "after the restart")).deliveries.first)
        #expect(queued.state == .queued)
        #expect(queued.id != delivered.id)
        let cancel = try await second.callExpectingError(OutboxCancelCommand(delivery: delivered.id))
        #expect(cancel.code == .invalidArgument)
        #expect(try await second.call(OutboxCommand()).deliveries.map(\.id) == [queued.id], "the new message is still there")
        await second.stop()
        await first.stop()
    }

    @Test func unknownIdsAreRefusedWithTheirName() async throws {
        let fixture = try await Self.loggedIn()
        let cancel = try await fixture.callExpectingError(OutboxCancelCommand(delivery: "0000000042-apns"))
        #expect(cancel.code == .invalidArgument)
        #expect(cancel.message.contains("0000000042-apns"))
        let retry = try await fixture.callExpectingError(OutboxRetryCommand(delivery: "nope"))
        #expect(retry.message.contains("'nope'"))
        await fixture.stop()
    }

    /// `outbox cancel ID` names one message for the life of the state directory: after the
    /// id counter was damaged, the next send does not take the id of one delivered before.
    @Test func anIdIsNeverHandedOutTwiceEvenAfterItsCounterWasDamaged() async throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let state = scratch.file("state")
        let first = try await DaemonFixture(stateDirectory: state)
        _ = try await first.login()
        let delivered = try await first.call(SendCommand(to: "bob", message: "one", pns: ["apns"])).deliveries
        #expect(delivered.map(\.state) == [.delivered])
        await first.stop()

        try Data("{\"reserved".utf8).write(to: URL(fileURLWithPath: state + "/outbox-ids"))
        let restarted = try await DaemonFixture(stateDirectory: state)
        _ = try await restarted.login()
        let next = try await restarted.call(SendCommand(to: "bob", message: "two", pns: ["apns"])).deliveries
        #expect(next.count == 1 && delivered.count == 1)
        #expect(next.first?.id != delivered.first?.id, "\(delivered.map(\.id)) then \(next.map(\.id))")
        #expect(restarted.log.contains("outbox id counter"), "the damage is told")
        await restarted.stop()
    }
}
