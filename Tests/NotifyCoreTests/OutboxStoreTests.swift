import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// The outbox on disk: one private file per delivery, and a damaged file never costs the others.
struct OutboxStoreTests {
    /// Whole seconds: the files keep ISO 8601 dates without fractions.
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    static func delivery(_ sequence: Int, to: String = "bob", _ platform: Platform = .apns,
                                 message: String = "hello") -> Delivery {
        Delivery(sequence: sequence, to: to, platform: platform, message: message,
                 createdAt: start, expiresAt: start.addingTimeInterval(7 * 86400))
    }

    static func names(_ store: OutboxStore) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: store.directory).sorted()
    }

    @Test func theOutboxLivesInsideTheStateDirectory() {
        #expect(OutboxStore(stateDirectory: "/var/lib/notifyd").directory == "/var/lib/notifyd/outbox")
    }

    @Test func savedDeliveriesLoadBackAsTheyWere() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)

        let plain = Self.delivery(1, message: "hi \"bob\"\n🍷 <&>")
        var retrying = Self.delivery(2, to: "carol", .wns)
        retrying.attempts = 3
        retrying.nextAttemptAt = Self.start.addingTimeInterval(90)
        retrying.lastError = WireError(code: .backendUnavailable, message: "HTTP 503")
        var failed = Self.delivery(3, to: "dave", .fcm)
        failed.attempts = 1
        failed.state = .failed
        failed.lastError = WireError(code: .backendRejected, message: "HTTP 400")

        for delivery in [failed, plain, retrying] { try store.save(delivery) }
        let (loaded, warnings) = store.load()
        #expect(warnings.isEmpty)
        #expect(loaded == [plain, retrying, failed])
    }

    @Test func eachDeliveryIsOnePrivateFileNamedByItsId() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        let apns = Self.delivery(1, .apns), wns = Self.delivery(1, .wns)
        try store.save(apns)
        try store.save(wns)

        let names = try FileManager.default.contentsOfDirectory(atPath: store.directory).sorted()
        #expect(names == [apns.id + ".json", wns.id + ".json"])
        for name in names {
            #expect(permissionBits((store.directory as NSString).appendingPathComponent(name)) == 0o600, "\(name)")
        }
        #expect(permissionBits(store.directory) == 0o700)
    }

    @Test func savingAgainReplacesTheFile() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        var delivery = Self.delivery(1)
        try store.save(delivery)
        delivery.attempts = 2
        delivery.lastError = WireError(code: .timeout, message: "timed out")
        try store.save(delivery)

        #expect(try FileManager.default.contentsOfDirectory(atPath: store.directory) == [delivery.id + ".json"])
        #expect(store.load().0 == [delivery])
    }

    @Test func theFileUsesTheStateFormat() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        var delivery = Self.delivery(4)
        delivery.nextAttemptAt = Self.start
        try store.save(delivery)

        let data = try #require(FileManager.default.contents(atPath: (store.directory as NSString).appendingPathComponent(delivery.id + ".json")))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["created_at"] as? String == "2027-01-15T08:00:00Z")
        #expect(object["next_attempt_at"] as? String == "2027-01-15T08:00:00Z")
        #expect(object["platform"] as? String == "apns")
        #expect(object["state"] as? String == "queued")
        #expect(object["id"] as? String == delivery.id)
    }

    @Test func removeIsIdempotent() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        let kept = Self.delivery(1), removed = Self.delivery(2)
        try store.save(kept)
        try store.save(removed)

        try store.remove(removed.id)
        #expect(store.load().0 == [kept])
        #expect(throws: Never.self) { try store.remove(removed.id) }
        #expect(throws: Never.self) { try store.remove("0000000042-apns") }
        #expect(store.load().0 == [kept])
    }

    @Test func removeBeforeAnythingWasSavedIsFine() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        #expect(throws: Never.self) { try store.remove("0000000001-apns") }
    }

    @Test func aCorruptFileIsMovedAsideAndTheOthersStillLoad() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        let first = Self.delivery(1), third = Self.delivery(3)
        try store.save(first)
        try store.save(third)
        let corrupt = (store.directory as NSString).appendingPathComponent("0000000002-apns.json")
        let truncated = (store.directory as NSString).appendingPathComponent("0000000004-apns.json")
        try Data("{\"id\": \"0000000002-apns\", ".utf8).write(to: URL(fileURLWithPath: corrupt))
        try Data("{\"id\": \"0000000004-apns\"}".utf8).write(to: URL(fileURLWithPath: truncated))

        let (loaded, warnings) = store.load()
        #expect(loaded == [first, third])
        #expect(warnings.count == 2)
        #expect(warnings.contains { $0.contains(corrupt) && $0.contains(corrupt + ".unreadable") }, "\(warnings)")
        #expect(warnings.contains { $0.contains(truncated) && $0.contains(truncated + ".unreadable") }, "\(warnings)")

        let names = try FileManager.default.contentsOfDirectory(atPath: store.directory).sorted()
        #expect(names == [first.id + ".json", "0000000002-apns.json.unreadable", third.id + ".json", "0000000004-apns.json.unreadable"])
        // The damaged content is kept for a person to look at.
        #expect(FileManager.default.contents(atPath: corrupt + ".unreadable") == Data("{\"id\": \"0000000002-apns\", ".utf8))

        // Once moved aside it is not reported again.
        let (again, quiet) = store.load()
        #expect(again == [first, third])
        #expect(quiet.isEmpty)
    }

    @Test func filesThatAreNotEntriesAreIgnored() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        let delivery = Self.delivery(1)
        try store.save(delivery)
        // What a crash in the middle of a write leaves behind.
        let leftover = (store.directory as NSString).appendingPathComponent(delivery.id + ".json.tmp-123-456")
        try Data("{".utf8).write(to: URL(fileURLWithPath: leftover))

        let (loaded, warnings) = store.load()
        #expect(loaded == [delivery])
        #expect(warnings.isEmpty)
        #expect(FileManager.default.fileExists(atPath: leftover))
    }

    @Test func loadingWithoutAnOutboxDirectoryGivesNothing() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.file("never-created"))
        let (loaded, warnings) = store.load()
        #expect(loaded.isEmpty)
        #expect(warnings.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: scratch.file("never-created")))
    }

    @Test func saveCreatesTheStateDirectoryWhenMissing() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.file("state"))
        let delivery = Self.delivery(1)
        try store.save(delivery)
        #expect(store.load().0 == [delivery])
    }

    @Test func theAccountIsKeptAndTheFormatVersioned() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        var delivery = Self.delivery(1)
        delivery.account = AccountKey(user: "alice", backend: "https://b.example")
        try store.save(delivery)
        let text = try String(contentsOfFile: store.directory + "/" + delivery.id + ".json", encoding: .utf8)
        #expect(text.contains("\"version\" : 2"))
        #expect(store.load().0 == [delivery])
    }

    /// Larger than any file the outbox writes (here 200 MB, sparse): moved aside unread,
    /// as an entry that cannot be read is, and the others load.
    @Test func aHugeEntryIsMovedAsideUnread() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        try store.save(Self.delivery(1))
        try store.save(Self.delivery(2))
        let huge = store.directory + "/0000000002-apns.json"
        #expect(truncate(huge, 200 << 20) == 0)
        let (loaded, warnings) = store.load()
        #expect(loaded.map(\.id) == ["0000000001-apns"])
        #expect(warnings == ["outbox entry \(huge) could not be read (it is larger than 16 MiB, more than notifyd reads); moved it to \(huge).unreadable"])
        #expect(FileManager.default.fileExists(atPath: huge + ".unreadable"))
    }

    @Test func anEntryFromANewerNotifydIsLeftInPlaceNotMisread() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        try store.save(Self.delivery(1))
        let newer = store.directory + "/0000000002-apns.json"
        #expect(FileManager.default.createFile(atPath: newer, contents: Data(#"{"version": 3, "shape": "unknown"}"#.utf8)))
        let (loaded, warnings) = store.load()
        #expect(loaded.map(\.id) == ["0000000001-apns"])
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("newer notifyd (format 3") == true)
        #expect(FileManager.default.fileExists(atPath: newer))
    }

    @Test func anEntryFromBeforeAccountsWereRecordedLoadsWithoutOne() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        try AtomicFile.ensureDirectory(store.directory)
        let legacy = #"{"id": "0000000001-apns", "sequence": 1, "to": "bob", "platform": "apns", "message": "hi", "attempts": 0, "state": "queued", "created_at": "2027-01-15T08:00:00Z", "expires_at": "2027-01-22T08:00:00Z"}"#
        #expect(FileManager.default.createFile(atPath: store.directory + "/0000000001-apns.json", contents: Data(legacy.utf8)))
        let (loaded, warnings) = store.load()
        #expect(warnings.isEmpty)
        #expect(loaded.map(\.message) == ["hi"])
        #expect(loaded.first?.account == nil)
    }

    /// Ids handed out are counted on disk ahead of the entries, so that an outbox emptied
    /// by deliveries does not start its ids again at 1.
    @Test func theHighestIdOutlivesTheEntries() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        try store.save(Self.delivery(1))
        try store.remove(Self.delivery(1).id)
        #expect(try Self.names(store).isEmpty)
        let restarted = OutboxStore(stateDirectory: scratch.path)
        #expect(restarted.load().warnings.isEmpty)
        #expect(restarted.highestSequence() == 1000)
        // Past the mark, it moves on before the entry is written.
        try restarted.save(batch: (1000...1001).map { Self.delivery($0) })
        #expect(OutboxStore(stateDirectory: scratch.path).highestSequence() == 2000)
        let text = try String(contentsOfFile: scratch.file("outbox-ids"), encoding: .utf8)
        #expect(text.contains(#""reserved_through" : 2000"#) && text.contains(#""version" : 1"#), "\(text)")
        #expect(permissionBits(scratch.file("outbox-ids")) == 0o600)
    }

    @Test func aDamagedIdCounterIsMovedAsideWithAWarning() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        try store.save(Self.delivery(5))
        try Data("{\"reserved".utf8).write(to: URL(fileURLWithPath: scratch.file("outbox-ids")))
        let restarted = OutboxStore(stateDirectory: scratch.path)
        let (loaded, warnings) = restarted.load()
        #expect(loaded.map(\.sequence) == [5])
        #expect(warnings.count == 1 && warnings[0].contains("moved it to \(scratch.file("outbox-ids")).unreadable"), "\(warnings)")
        #expect(restarted.highestSequence() >= OutboxIDCounter.clockFloor(now: Date()) - 10, "past any id a delivered message had")
    }

    /// A delivered message leaves nothing behind, so after the counter was damaged, the
    /// highest id left on disk says nothing of the ids already used: the next one starts
    /// past them all.
    @Test func afterADamagedCounterNoIdOfADeliveredMessageIsHandedOutAgain() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        try store.save(batch: (1...1500).map { Self.delivery($0) })
        for sequence in 1...1499 { try store.remove(Self.delivery(sequence).id) }
        try Data("{\"reserved".utf8).write(to: URL(fileURLWithPath: scratch.file("outbox-ids")))
        let restarted = OutboxStore(stateDirectory: scratch.path)
        _ = restarted.load()
        #expect(restarted.highestSequence() > 2000)
        #expect(restarted.highestSequence() >= OutboxIDCounter.clockFloor(now: Date()) - 10)
    }

    @Test func theClockFloorRisesTenIdsASecondAndStaysInRange() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(OutboxIDCounter.clockFloor(now: now) == 1_000_000_000)
        #expect(OutboxIDCounter.clockFloor(now: now.addingTimeInterval(1)) == 1_000_000_010)
        #expect(OutboxIDCounter.clockFloor(now: Date(timeIntervalSince1970: 0)) == 0)
        #expect(OutboxIDCounter.clockFloor(now: Date(timeIntervalSince1970: 9e12)) < OutboxIDCounter.largestSequence)
    }
}
