import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// Failed and expired messages: kept as entries without their text, listed with their first
/// words read back from disk, written when many expire at once without holding them whole,
/// and found on their page and after a restart.
extension OutboxDeferredTests {
    /// A week offline expires everything queued, and each failed or expired message stays
    /// listed until a purge: kept without its text, as a deferred one is, from the moment it
    /// expires and after a start; the listing reads its first words back from its file.
    @Test func anExpiredMessageIsKeptWithoutItsTextAndListedWithItsFirstWordsBeforeAndAfterARestart() async throws {
        let setup = try await Setup()
        setup.backend.failEverything(.status(503, retryAfter: nil, body: ""))
        let first = await setup.outbox()
        let text = String(repeating: "a long message, ", count: 64)
        let ids = try await first.enqueue(to: "bob", message: text, platforms: [.apns, .wns])
        try await first.committed(ids)
        #expect(await eventually { await first.nothingUnderWay })
        // Past `outbox_expiry` (7 days) with the backend still away.
        setup.clock.advance(by: 8 * 86_400)
        #expect(await eventually { await first.list().filter { $0.state == .expired }.count == 2 })
        // The first words are read from the file that says it expired, once it is written.
        #expect(await eventually { await first.outcomes.noneBeingWritten })
        #expect(await first.queue.dead.map(\.message) == ["", ""], "kept without its text once it expired")
        let before = await first.list()
        #expect(before.map(\.id) == ids && before.allSatisfy { $0.preview == String(text.prefix(40)) })
        await first.shutdown()

        let second = await setup.outbox()
        let after = await second.list()
        #expect(after == before, "listed as before the restart: state, attempts, error and first words")
        #expect(after.map(\.id) == ids && after.allSatisfy { $0.preview == String(text.prefix(40)) })
        #expect(await second.queue.dead.map(\.message) == ["", ""], "kept without the text its record holds")
        let page = await second.page(limit: 1, after: nil)
        #expect(page.deliveries.map(\.preview) == [String(text.prefix(40))])
        #expect(await second.purge() == 2)
        #expect(await eventually { setup.files.allSatisfy { !$0.hasSuffix("-apns.json") && !$0.hasSuffix("-wns.json") } })
        await second.shutdown()
    }

    /// Most of a long queue is deferred when it expires: its messages' records stay in their
    /// batch, and one mark says they expired (`outbox-expired`); each is listed in order with
    /// its first words, told to a sender still waiting, and the same after a restart.
    @Test func deferredMessagesThatExpireTogetherAreWrittenListedAndToldEach() async throws {
        let setup = try await Setup()
        setup.backend.failEverything(.status(503, retryAfter: nil, body: ""))
        let outbox = await setup.outbox()
        let ids = try await setup.accept(40, on: outbox)
        #expect(await eventually { await outbox.nothingUnderWay })
        #expect(await outbox.queue.deferred.count > 30)
        async let told = outbox.wait(for: [ids[39]], untilFinal: true, timeout: 60)
        setup.clock.advance(by: 8 * 86_400)
        #expect(await told.map(\.state) == [.expired], "the sender still waiting hears it")
        #expect(await eventually { await outbox.list().filter { $0.state == .expired }.count == 40 })
        let listed = await outbox.list()
        #expect(listed.map(\.id) == ids)
        #expect(listed.map(\.preview) == (0..<40).map { "message \($0)" })
        #expect(outbox.summary.failed == 40 && outbox.summary.waiting == 0)
        #expect(await outbox.queue.dead.allSatisfy(\.message.isEmpty))
        await outbox.shutdown()
        // The two tried, the first to each recipient, are written whole with their attempts;
        // the rest, the active part's other two as well, stay as they were queued.
        #expect(setup.files.filter { !$0.hasPrefix("batch-") && $0.hasSuffix("-apns.json") }.count == 2)
        #expect(setup.files.filter { $0.hasPrefix("batch-") && $0.hasSuffix(".json") }.count == 1)
        #expect(FileManager.default.fileExists(atPath: setup.directory.file("outbox-expired")))

        let second = await setup.outbox()
        #expect(await second.list() == listed)
        #expect(await second.page(limit: 5, after: ids[9]).deliveries.map(\.id) == Array(ids[10..<15]))
        #expect(await second.purge() == 40)
        #expect(await eventually { setup.files.isEmpty })
        await second.shutdown()
    }

    /// A message moved up from the deferred part and not tried before it expires is not
    /// written again either: its record is where it was queued. After a week offline the
    /// next ones move up pass after pass, each to expire a second later.
    @Test func aMessageMovedUpAndNeverTriedExpiresWithoutBeingWrittenAgain() async throws {
        let setup = try await Setup()
        setup.backend.failEverything(.status(503, retryAfter: nil, body: ""))
        let outbox = await setup.outbox(active: 1, perKey: 1)
        // bob's first and carol's are active and tried; bob's second waits deferred.
        let ids = try await setup.accept(3, on: outbox)
        #expect(await eventually { await outbox.nothingUnderWay && outbox.summary.nextAttemptAt != nil })
        #expect(await outbox.queue.deferred.count == 1)
        _ = try await outbox.cancel(ids[0])
        // Moved up, it waits out bob's backoff.
        #expect(await eventually { await outbox.queue.queued.map(\.id) == [ids[1], ids[2]] })
        setup.clock.advance(by: 8 * 86_400)
        #expect(await eventually { await outbox.list().filter { $0.state == .expired }.map(\.id) == [ids[1], ids[2]] })
        #expect(await eventually { await outbox.outcomes.noneBeingWritten })
        #expect(await outbox.list().map(\.preview) == ["message 1", "message 2"])
        #expect(await outbox.list().map(\.attempts) == [1, 0])
        await outbox.shutdown()
        #expect(setup.files.filter { !$0.hasPrefix("batch-") } == ["\(ids[1]).json"], "only the one tried is written again")
    }

    /// Once a write has worked, a message goes to the active part before its batch is
    /// written; where its record is, is known once it is. Not tried before it expires, it is
    /// not written again either.
    @Test func aMessageQueuedBeforeItWasWrittenAndNeverTriedExpiresWithoutBeingWrittenAgain() async throws {
        let setup = try await Setup()
        let outbox = await setup.outbox()
        let first = try await outbox.enqueue(to: "bob", message: "delivered", platforms: [.apns])
        try await outbox.committed(first)
        #expect(await eventually { await outbox.list().isEmpty }, "delivered: the writes work")
        setup.backend.failEverything(.status(503, retryAfter: nil, body: ""))
        let ids = try await outbox.enqueue(to: "bob", message: "tried", platforms: [.apns])
            + outbox.enqueue(to: "bob", message: "never tried", platforms: [.apns])
        try await outbox.committed(ids)
        #expect(await eventually { await outbox.nothingUnderWay && outbox.summary.nextAttemptAt != nil })
        #expect(await outbox.queue.untriedPlaces.keys.sorted() == [ids[1]])
        setup.clock.advance(by: 8 * 86_400)
        #expect(await eventually { await outbox.list().filter { $0.state == .expired }.map(\.id) == ids })
        #expect(await eventually { await outbox.outcomes.noneBeingWritten })
        #expect(await outbox.list().map(\.preview) == ["tried", "never tried"])
        await outbox.shutdown()
        #expect(setup.files.filter { !$0.hasPrefix("batch-") } == ["\(ids[0]).json"], "only the one tried is written again")
    }

    /// Ten messages accepted, then ten more a day later, to bob and carol in turn, while the
    /// backend refuses: the active part holds four, two per recipient, the rest are
    /// deferred. The clock is then moved to where the first ten expire, with the fsync of
    /// the file `held` names (given the first ten's ids) held.
    struct ExpiringWaves {
        let directory: ScratchDirectory
        let recorder: FileCallRecorder
        let outbox: Outbox
        let first: [String]
        let second: [String]

        init(holding held: (_ first: [String]) -> String) async throws {
            directory = try ScratchDirectory()
            recorder = FileCallRecorder(root: directory.path)
            let backend = FakeBackend()
            backend.failEverything(.status(503, retryAfter: nil, body: ""))
            let clock = ManualClock()
            let outbox = try await DurableWriteTests.outbox(directory, recorder, backend: backend, clock: clock)
            await outbox.setActiveLimits(4, perKey: 2)
            func accept(_ count: Int) async throws -> [String] {
                var ids: [String] = []
                for number in 0..<count { ids += try await outbox.enqueue(to: number % 2 == 0 ? "bob" : "carol", message: "message \(number)", platforms: [.apns]) }
                try await outbox.committed(ids)
                return ids
            }
            first = try await accept(10)
            clock.advance(by: 86_400)
            second = try await accept(10)
            #expect(await eventually { await outbox.nothingUnderWay })
            // The attempts' outcomes written too: one being written expires only after it.
            #expect(await eventually { await outbox.outcomes.noneBeingWritten })
            #expect(await outbox.queue.deferred.count == 16)
            self.outbox = outbox
            recorder.holdNext("fsync \(held(first)).tmp")
            clock.advance(by: 6 * 86_400 + 1)
            #expect(await eventually { recorder.isHolding })
        }

        func end() async {
            recorder.release()
            #expect(await eventually { await outbox.list().filter { $0.state == .expired }.map(\.id) == first })
            await outbox.shutdown()
            directory.remove()
        }
    }

    /// After a week offline, messages expire pass after pass for as long as they were
    /// queued. While the active part's expiries are written, what is deferred stays
    /// deferred: moved up, each would be read whole only to expire in the active part and
    /// wait whole for the writer. Once they are written, the next ones move up.
    @Test func nothingMovesUpWhileTheActivePartsExpiriesAreWritten() async throws {
        // The first ten expire (the active part's four, then six deferred).
        let waves = try await ExpiringWaves { "outbox/\($0[0]).json" }
        #expect(await waves.outbox.queue.dead.count == 10)
        #expect(await waves.outbox.queue.queued.isEmpty, "nothing moved up while the expiry is written")
        #expect(await waves.outbox.queue.deferred.count == 10)
        waves.recorder.release()
        #expect(await eventually { await waves.outbox.queue.queued.map(\.id) == Array(waves.second.prefix(4)) }, "moved up once it is written")
        await waves.end()
    }

    /// The hold lasts while the active part's expiries are written, not the deferred part's
    /// mark: what has not expired moves up meanwhile.
    @Test func whatHasNotExpiredMovesUpWhileTheDeferredPartsExpiriesAreWritten() async throws {
        // The mark, written after the active part's expiries, is held.
        let waves = try await ExpiringWaves { _ in "outbox-expired" }
        #expect(await eventually { await waves.outbox.queue.queued.map(\.id) == Array(waves.second.prefix(4)) }, "moved up while it is held")
        await waves.end()
    }

    /// A failed record written before accounts were recorded is not adopted by the login,
    /// as a queued one is: it is never sent, and a start keeps it without its text, which
    /// must not be written back without it.
    @Test func aFailedRecordWithoutAnAccountKeepsItsTextAcrossARestart() async throws {
        let setup = try await Setup()
        let now = setup.clock.now()
        var failed = Delivery(sequence: 3, to: "bob", platform: .apns, message: "the text", createdAt: now,
                              expiresAt: now.addingTimeInterval(86_400), account: nil)
        failed.state = .failed
        failed.attempts = 1
        failed.lastError = WireError(code: .backendRejected, message: "HTTP 400")
        let store = OutboxStore(stateDirectory: setup.directory.path)
        try store.save(failed)

        let outbox = await setup.outbox()
        #expect(await outbox.list().map(\.preview) == ["the text"])
        await outbox.shutdown()
        #expect(try store.read(failed.id, at: .inOwnFile).get().message == "the text")
        let second = await setup.outbox()
        #expect(await second.list().map(\.preview) == ["the text"])
        await second.shutdown()
    }

    /// A failed record with an id of its own (edited by hand) is kept whole among the failed
    /// entries, in the order of its sequence, not of its id: a page in id order finds it all
    /// the same.
    @Test func aFailedRecordWithAnIDOfItsOwnIsOnItsPage() async throws {
        let setup = try await Setup()
        let now = setup.clock.now()
        let store = OutboxStore(stateDirectory: setup.directory.path)
        for sequence in 1...3 {
            var failed = Delivery(sequence: sequence, to: "bob", platform: .apns, message: "text \(sequence)", createdAt: now,
                                  expiresAt: now.addingTimeInterval(86_400), account: setup.accounts.currentKey)
            failed.state = .failed
            failed.attempts = 1
            if sequence == 1 { failed.id = "hand-made" }
            try store.save(failed)
        }
        let outbox = await setup.outbox()
        let page = await outbox.page(limit: 5, after: Delivery.id(sequence: 2, platform: .apns))
        #expect(page.deliveries.map(\.id) == [Delivery.id(sequence: 3, platform: .apns), "hand-made"])
        #expect(page.deliveries.last?.preview == "text 1")
        await outbox.shutdown()
    }
}
