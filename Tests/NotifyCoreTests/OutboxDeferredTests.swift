import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// Messages queued past the active part of the outbox wait on disk as index entries, and
/// are read back whole at their turn: with their text, their Idempotency-Key, in order,
/// after a restart too; a record that cannot be read back is handled as a start handles one.
struct OutboxDeferredTests {
    final class Setup: Sendable {
        let directory: ScratchDirectory
        let backend = FakeBackend()
        let clock = ManualClock()
        let settings: SettingsStore
        let accounts: AccountKeeper

        init(maxBytes: Int = RuntimeSettings.defaultOutboxMaxBytes, api: BackendDialect = .registrations) async throws {
            directory = try ScratchDirectory()
            settings = SettingsStore(.init(backend: OutboxTests.backend, backendAPI: api, policy: RegistrationPolicy(backoff: Backoff(initial: 10, multiplier: 2, maximum: 60)),
                                           outboxMaxBytes: maxBytes))
            accounts = AccountKeeper(stateDirectory: directory.path, settings: settings)
            try await accounts.commit(Credentials(user: "alice", password: "alice", backend: nil, api: api))
        }

        /// An outbox on the directory whose active part holds 4 messages, 2 per recipient past
        /// that, built as the daemon builds it: each one as after a restart, with the login
        /// read back from the directory.
        func outbox(active: Int = 4, perKey: Int = 2) async -> Outbox {
            let outbox = Components(settings: settings, stateDirectory: directory.path, backend: backend, clock: clock, logger: .silent).outbox
            await outbox.setActiveLimits(active, perKey: perKey)
            await outbox.start()
            return outbox
        }

        /// An outbox with `messages` to bob accepted together, the first held in flight by
        /// the backend.
        func outboxWithTheFirstHeld(_ messages: [String]) async throws -> (Outbox, [String]) {
            backend.holdNext("send")
            let outbox = await outbox()
            var ids: [String] = []
            for message in messages { ids += try await outbox.enqueue(to: "bob", message: message, platforms: [.apns]) }
            try await outbox.committed(ids)
            #expect(await eventually { backend.isHolding })
            return (outbox, ids)
        }

        /// `count` messages, to bob and carol in turn, accepted together (one batch file).
        func accept(_ count: Int, on outbox: Outbox) async throws -> [String] {
            var ids: [String] = []
            for number in 0..<count {
                ids += try await outbox.enqueue(to: number % 2 == 0 ? "bob" : "carol", message: "message \(number)", platforms: [.apns])
            }
            try await outbox.committed(ids)
            return ids
        }

        /// The texts the backend was sent for `recipient`, in order.
        func sent(to recipient: String) -> [String] {
            backend.calls.compactMap { call -> String? in
                guard case .send(_, let to, let body) = call, to == recipient else { return nil }
                return body
            }
        }

        var sendCount: Int { backend.calls.filter { if case .send = $0 { true } else { false } }.count }

        var files: [String] { (try? FileManager.default.contentsOfDirectory(atPath: directory.file("outbox")).sorted()) ?? [] }

        deinit { directory.remove() }
    }

    static func bodies(_ numbers: [Int]) -> [String] {
        numbers.map { (try? NotificationText.body("message \($0)", for: .apns, escaping: .tutorial)) ?? "" }
    }

    @Test func messagesPastTheActivePartWaitOnDiskAndGoInOrderWithTheirText() async throws {
        let setup = try await Setup()
        setup.backend.failEverything(.status(503, retryAfter: nil, body: ""))
        let outbox = await setup.outbox()
        _ = try await setup.accept(12, on: outbox)
        #expect(await eventually { await outbox.nothingUnderWay })
        let queue = await outbox.queue
        #expect(queue.queued.count == 4 && queue.deferred.count == 8, "the active part holds 4, the rest wait as index entries")
        #expect(queue.deferred.positions.allSatisfy { queue.deferred.delivery(at: $0).message.isEmpty }, "no message text in memory")

        setup.backend.failEverything(nil)
        _ = try await outbox.retry(nil)
        #expect(await eventually { setup.sendCount >= 2 + 12 })
        // Each recipient's messages once each, in order, with their text read back from disk.
        let tried = setup.sendCount - 12
        #expect(Array(setup.sent(to: "bob").suffix(6)) == Self.bodies([0, 2, 4, 6, 8, 10]))
        #expect(Array(setup.sent(to: "carol").suffix(6)) == Self.bodies([1, 3, 5, 7, 9, 11]))
        #expect(tried <= 2, "only the first of each recipient was tried during the outage")
        #expect(await eventually { await outbox.nothingUnderWay && setup.files.isEmpty }, "nothing left on disk")
        await outbox.shutdown()
    }

    @Test func aDeferredMessageIsReadBackAfterARestartWithItsIdempotencyKey() async throws {
        let setup = try await Setup()
        setup.backend.failEverything(.status(503, retryAfter: nil, body: ""))
        let first = await setup.outbox()
        let ids = try await setup.accept(10, on: first)
        #expect(await eventually { await first.nothingUnderWay })
        await first.shutdown()
        let keys = Dictionary(uniqueKeysWithValues: OutboxStore(stateDirectory: setup.directory.path).load().0.map { ($0.id, $0.idempotencyKey) })

        setup.backend.failEverything(nil)
        let tried = setup.sendCount
        let second = await setup.outbox()
        #expect(await eventually { setup.sendCount == tried + 10 })
        #expect(Array(setup.sent(to: "bob").suffix(5)) == Self.bodies([0, 2, 4, 6, 8]))
        #expect(Array(setup.sent(to: "carol").suffix(5)) == Self.bodies([1, 3, 5, 7, 9]))
        // Every message went with the key it was accepted with.
        let sentKeys = Array(setup.backend.sendKeys.suffix(10))
        #expect(Set(sentKeys.compactMap { $0 }) == Set(ids.compactMap { keys[$0] ?? nil }))
        #expect(sentKeys.count == 10 && !sentKeys.contains(nil))
        #expect(await eventually { await second.nothingUnderWay && setup.files.isEmpty })
        await second.shutdown()
    }

    @Test func aBatchDamagedWhileItsMessagesWaitIsMovedAsideAndTheyAreListedFailed() async throws {
        let setup = try await Setup()
        setup.backend.failEverything(.status(503, retryAfter: nil, body: ""))
        let outbox = await setup.outbox()
        _ = try await setup.accept(10, on: outbox)
        #expect(await eventually { await outbox.nothingUnderWay })
        let batch = try #require(setup.files.first { $0.hasPrefix("batch-") && $0.hasSuffix(".json") })
        // The last half of the file, where the deferred messages' records are, overwritten.
        let path = setup.directory.file("outbox/" + batch)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        for index in (bytes.count / 2)..<bytes.count { bytes[index] = UInt8(ascii: "x") }
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        setup.backend.failEverything(nil)
        _ = try await outbox.retry(nil)
        #expect(await eventually {
            let summary = outbox.summary
            return await outbox.nothingUnderWay && summary.waiting == 0
        })
        let listed = await outbox.list()
        let failed = listed.filter { $0.state == .failed }
        #expect(!failed.isEmpty && failed.allSatisfy { $0.error?.message.contains("could not be read") == true || $0.error?.message.contains("is gone") == true })
        // The four in the active part were read before the damage, and went.
        #expect(setup.sendCount >= 2 + 4)
        #expect(setup.files.contains(batch + ".unreadable"))
        #expect(failed.count + (setup.sendCount - 2) == 10, "each message either sent or listed failed, none lost")
        await outbox.shutdown()
    }

    /// The text a send of `message` is refused with, or nil when it is accepted.
    static func refusal(_ message: String, on outbox: Outbox) async -> String? {
        do {
            _ = try await outbox.submit(to: "bob", message: message, platforms: [.apns])
            return nil
        } catch {
            return error.description
        }
    }

    @Test func outboxMaxBytesRefusesASendAcrossARestartAndDropsNothing() async throws {
        let setup = try await Setup(maxBytes: 100)
        setup.backend.failEverything(.status(503, retryAfter: nil, body: ""))
        let outbox = await setup.outbox(active: 1, perKey: 1)
        for number in 0..<3 { #expect(await Self.refusal(String(repeating: "a", count: 29) + "\(number)", on: outbox) == nil) }
        let refused = try #require(await Self.refusal(String(repeating: "b", count: 20), on: outbox))
        #expect(refused.hasPrefix("the outbox is full: 3 messages waiting for bob (3), 90 bytes of text (outbox_max_bytes = 100 bytes)"))
        #expect(outbox.summary.bytes == 90)
        await outbox.shutdown()

        // Two of the three wait on disk as index entries after the restart: counted all the same.
        let second = await setup.outbox(active: 1, perKey: 1)
        #expect(await second.queue.deferred.count == 2)
        #expect(await Self.refusal(String(repeating: "b", count: 20), on: second)?.contains("outbox_max_bytes") == true)
        #expect(await Self.refusal(String(repeating: "c", count: 10), on: second) == nil, "up to the bound is accepted")
        #expect(await second.queue.queuedCount == 4, "nothing accepted was dropped")
        await second.shutdown()
    }

    /// A record whose id is not the one its sequence number gives (edited by hand, or
    /// written by another tool: the queue looks such ids up by scanning) cannot be an index
    /// entry: it is queued whole, and must come with its text and its Idempotency-Key,
    /// as it did when every record was decoded whole.
    @Test(arguments: [true, false])
    func aRecordWithAnIDOfItsOwnIsSentWithItsTextAfterARestart(withAccount: Bool) async throws {
        let setup = try await Setup()
        let account = try #require(setup.accounts.currentKey)
        let now = setup.clock.now()
        // Without an account: written before accounts were recorded, adopted by the login.
        var delivery = Delivery(sequence: 7, to: "bob", platform: .apns, message: "the text", createdAt: now,
                                expiresAt: now.addingTimeInterval(86_400), account: withAccount ? account : nil)
        delivery.id = "hand-made"
        delivery.idempotencyKey = "7c1e2a44-0000-4000-8000-000000000007"
        try OutboxStore(stateDirectory: setup.directory.path).save(delivery)

        let outbox = await setup.outbox()
        #expect(await eventually { setup.sendCount == 1 && setup.files.isEmpty })
        #expect(setup.sent(to: "bob") == [try NotificationText.body("the text", for: .apns, escaping: .tutorial)])
        #expect(setup.backend.sendKeys == [delivery.idempotencyKey])
        await outbox.shutdown()
    }

    /// Copies of one message that share a sequence number (not made so today, but a
    /// record on disk may have been: `OutboxQueue` finds each in its active part) are
    /// each found by id once a start keeps them as index entries.
    @Test func deferredCopiesSharingASequenceNumberAreEachFound() {
        var queue = OutboxQueue(backoff: Backoff(initial: 10, multiplier: 2, maximum: 60), concurrency: 4)
        let account = AccountKey(user: "alice", backend: "b")
        queue.setAccount(account)
        func delivery(_ sequence: Int, _ platform: Platform) -> Delivery {
            Delivery(sequence: sequence, to: "bob", platform: platform, message: "", createdAt: Date(timeIntervalSince1970: 0),
                     expiresAt: Date(timeIntervalSince1970: 1000), account: account)
        }
        // In the order a start gives them: by sequence, then id.
        let apns = delivery(5, .apns), fcm = delivery(5, .fcm), wns = delivery(5, .wns)
        for copy in [delivery(4, .apns), apns, fcm, wns, delivery(6, .apns)] {
            queue.addDeferred(copy, stored: StoredEntry(offset: 0, length: 1), bytes: 1)
        }
        #expect(queue.deferred.count == 5)
        for copy in [apns, fcm, wns] { #expect(queue.delivery(copy.id)?.platform == copy.platform, "\(copy.id)") }
        #expect(queue.cancel(fcm.id)?.platform == .fcm)
        #expect(queue.delivery(fcm.id) == nil)
        #expect(queue.cancel(apns.id)?.platform == .apns)
        #expect(queue.delivery(wns.id)?.platform == .wns, "found past the removed copies before it")
        #expect(queue.isWaitingForRetry(wns.id, now: Date(timeIntervalSince1970: 1)))
    }

    @Test func theActivePartTakesEachKeysFirstAndMovesUpInOrder() {
        var queue = OutboxQueue(backoff: Backoff(initial: 10, multiplier: 2, maximum: 60), concurrency: 4)
        queue.setActiveLimits(3, perKey: 1)
        let account = AccountKey(user: "alice", backend: "b")
        queue.setAccount(account)
        func delivery(_ sequence: Int, to: String) -> Delivery {
            Delivery(sequence: sequence, to: to, platform: .apns, message: "m\(sequence)", createdAt: Date(timeIntervalSince1970: 0),
                     expiresAt: Date(timeIntervalSince1970: 1000), account: account)
        }
        for sequence in 1...6 { queue.add(delivery(sequence, to: "bob"), stored: StoredEntry(offset: 0, length: 1)) }
        queue.add(delivery(7, to: "carol"), stored: StoredEntry(offset: 0, length: 1))
        queue.add(delivery(8, to: "bob"), stored: StoredEntry(offset: 0, length: 1))
        #expect(queue.queued.map(\.sequence) == [1, 2, 3, 7], "three in order, then carol's first past the bound")
        #expect(queue.deferred.count == 4)
        #expect(queue.delivery(Delivery.paddedSequence(5) + "-apns")?.to == "bob", "a deferred one is found by its id")
        // Bob's first goes: he still has two in the active part, so nothing moves up.
        queue.finished(queue.queued[0].id, .delivered, now: Date(timeIntervalSince1970: 1))
        #expect(queue.takePromotions().isEmpty)
        // His next two go: the active part has room for two, taken in order.
        queue.finished(queue.queued[0].id, .delivered, now: Date(timeIntervalSince1970: 1))
        queue.finished(queue.queued[0].id, .delivered, now: Date(timeIntervalSince1970: 1))
        let moved = queue.takePromotions()
        #expect(moved.map(\.delivery.sequence) == [4, 5])
        #expect(moved.allSatisfy { $0.delivery.message.isEmpty }, "read back by the caller")
    }
}
