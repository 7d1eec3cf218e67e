import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// Batches in the outbox on disk: the deliveries accepted together, written together in
/// one file, and each member's removal recorded until the last has left.
struct OutboxBatchStoreTests {
    @Test func aBatchIsOneFileAndLoadsBackInOrder() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        let batch = (1...3).map { OutboxStoreTests.delivery($0, message: "burst \($0)") }
        try store.save(batch: batch)

        #expect(try OutboxStoreTests.names(store) == ["batch-" + batch[2].id + ".json"])
        #expect(permissionBits((store.directory as NSString).appendingPathComponent("batch-" + batch[2].id + ".json")) == 0o600)
        #expect(OutboxStore(stateDirectory: scratch.path).load().0 == batch)
    }

    @Test func aBatchOfOneIsAnOrdinaryEntry() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        let delivery = OutboxStoreTests.delivery(1)
        try store.save(batch: [delivery])
        #expect(try OutboxStoreTests.names(store) == [delivery.id + ".json"])
    }

    @Test func membersRemovedFromABatchStayRemovedAfterARestart() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        let batch = (1...4).map { OutboxStoreTests.delivery($0) }
        try store.save(batch: batch)
        try store.remove(batch[0].id)
        try store.remove(batch[2].id)

        // A new store is what a restart sees.
        #expect(OutboxStore(stateDirectory: scratch.path).load().0 == [batch[1], batch[3]])
    }

    @Test func aBatchGoesOnceAllItsMembersHaveLeft() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        let batch = (1...3).map { OutboxStoreTests.delivery($0) }
        try store.save(batch: batch)
        for delivery in batch { try store.remove(delivery.id) }
        #expect(try OutboxStoreTests.names(store).isEmpty)

        // After a restart too: members left before it, the rest after.
        let other = (4...6).map { OutboxStoreTests.delivery($0) }
        try store.save(batch: other)
        try store.remove(other[1].id)
        let restarted = OutboxStore(stateDirectory: scratch.path)
        #expect(restarted.load().0 == [other[0], other[2]])
        try restarted.remove(other[0].id)
        try restarted.remove(other[2].id)
        #expect(try OutboxStoreTests.names(store).isEmpty)
    }

    @Test func aMemberSavedAgainWinsOverItsBatchCopy() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        var batch = (1...2).map { OutboxStoreTests.delivery($0) }
        try store.save(batch: batch)
        batch[1].attempts = 2
        batch[1].lastError = WireError(code: .timeout, message: "timed out")
        try store.save(batch[1])

        let restarted = OutboxStore(stateDirectory: scratch.path)
        #expect(restarted.load().0 == batch)
        try restarted.remove(batch[1].id)
        #expect(OutboxStore(stateDirectory: scratch.path).load().0 == [batch[0]])
    }

    @Test func aMemberSavedAgainGoesWithItsOwnFileWithoutARestart() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        var batch = (1...3).map { OutboxStoreTests.delivery($0) }
        try store.save(batch: batch)
        batch[1].attempts = 2
        try store.save(batch[1])
        for delivery in batch { try store.remove(delivery.id) }
        #expect(try OutboxStoreTests.names(store).isEmpty)
    }

    /// A member written to a file of its own (it failed, or expired, or waits for a retry)
    /// leaves its batch: once all have, the batch goes, and only their files are left,
    /// which a restart reads as they were written.
    @Test func membersSavedToFilesOfTheirOwnLeaveTheirBatchWhichGoesOnceAllHave() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        var batch = (1...3).map { OutboxStoreTests.delivery($0) }
        try store.save(batch: batch)
        let name = "batch-" + batch[2].id
        batch[1].state = .expired
        try store.save(batch[1])
        #expect(try OutboxStoreTests.names(store) == [batch[1].id + ".json", name + ".done", name + ".json"])
        for index in [0, 2] {
            batch[index].state = .failed
            try store.save(batch[index])
        }
        #expect(try OutboxStoreTests.names(store) == batch.map { $0.id + ".json" })

        let restarted = OutboxStore(stateDirectory: scratch.path)
        #expect(restarted.load().0 == batch)
        for delivery in batch { try restarted.remove(delivery.id) }
        #expect(try OutboxStoreTests.names(store).isEmpty)
    }

    /// The line saying a member left could not be written (its log could not be opened, for
    /// once): it stays a member, so that its removal later is logged, and it does not come
    /// back from the batch's copy after a restart.
    @Test func aMemberWhoseLeavingCouldNotBeLoggedIsStillRemovedForGood() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        var batch = (1...2).map { OutboxStoreTests.delivery($0) }
        try store.save(batch: batch)
        let log = store.directory + "/batch-" + batch[1].id + ".done"
        try FileManager.default.createDirectory(atPath: log, withIntermediateDirectories: false)
        batch[0].state = .failed
        try store.save(batch[0])
        try FileManager.default.removeItem(atPath: log)
        try store.remove(batch[0].id)
        #expect(OutboxStore(stateDirectory: scratch.path).load().0 == [batch[1]])
    }

    /// A stop between a member's own file and the line saying it left: a start reads the
    /// file, has the member leave then, and lets the batch go once none is left in it.
    @Test func aMemberWhoseFileWasWrittenButNotItsLeavingLeavesAtTheNextStart() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        var batch = (1...2).map { OutboxStoreTests.delivery($0) }
        try OutboxStore(stateDirectory: scratch.path).save(batch: batch)
        // A store that does not know the batch writes the files alone.
        let unaware = OutboxStore(stateDirectory: scratch.path)
        for index in batch.indices {
            batch[index].attempts = 1
            try unaware.save(batch[index])
        }
        #expect(try OutboxStoreTests.names(unaware).filter { $0.hasPrefix("batch-") }.count == 1)

        let restarted = OutboxStore(stateDirectory: scratch.path)
        #expect(restarted.load().0 == batch)
        #expect(try OutboxStoreTests.names(restarted) == batch.map { $0.id + ".json" })
        for delivery in batch { try restarted.remove(delivery.id) }
        #expect(try OutboxStoreTests.names(restarted).isEmpty)
    }

    /// A file of its own that this notifyd could not read (a newer one's) goes with the
    /// member too, as it did when every removal looked for one.
    @Test func aMembersUnreadableOwnFileGoesWithItAfterARestart() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        let batch = (1...2).map { OutboxStoreTests.delivery($0) }
        try store.save(batch: batch)
        let newer = store.directory + "/" + batch[0].id + ".json"
        #expect(FileManager.default.createFile(atPath: newer, contents: Data(#"{"version": 3, "shape": "unknown"}"#.utf8)))
        let restarted = OutboxStore(stateDirectory: scratch.path)
        #expect(restarted.load().0 == batch)
        try restarted.remove(batch[0].id)
        #expect(!FileManager.default.fileExists(atPath: newer))
    }

    /// The removal logs stay open between lines, a few at a time: more batches than that
    /// part-way through still record every removal.
    @Test func removalsFromMoreBatchesThanLogsKeptOpenAreAllRecorded() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        let batches = (0..<20).map { number in [OutboxStoreTests.delivery(2 * number + 1), OutboxStoreTests.delivery(2 * number + 2)] }
        for batch in batches { try store.save(batch: batch) }
        for batch in batches.reversed() { try store.remove(batch[0].id) }
        #expect(OutboxStore(stateDirectory: scratch.path).load().0 == batches.map { $0[1] })
        #expect(store.openLogCount == 8, "a few kept open")
        for batch in batches { try store.remove(batch[1].id) }
        #expect(try OutboxStoreTests.names(store).isEmpty)
        #expect(store.openLogCount == 0, "each closed with its batch")
    }

    @Test func aFinishedBatchLeftByACrashIsClearedAtLoad() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        let batch = (1...2).map { OutboxStoreTests.delivery($0) }
        try store.save(batch: batch)
        try store.remove(batch[0].id)
        // The last removal's log line was written, but not the batch's removal.
        let log = (store.directory as NSString).appendingPathComponent("batch-" + batch[1].id + ".done")
        let handle = try #require(FileHandle(forWritingAtPath: log))
        handle.seekToEndOfFile()
        handle.write(Data((batch[1].id + "\n").utf8))
        handle.closeFile()
        // And a log whose batch is gone.
        try Data("x\n".utf8).write(to: URL(fileURLWithPath: (store.directory as NSString).appendingPathComponent("batch-0000000009-apns.done")))

        #expect(OutboxStore(stateDirectory: scratch.path).load().0.isEmpty)
        #expect(try OutboxStoreTests.names(store).isEmpty)
    }

    @Test func aCorruptBatchIsMovedAside() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        let kept = OutboxStoreTests.delivery(1)
        try store.save(kept)
        let corrupt = (store.directory as NSString).appendingPathComponent("batch-0000000003-apns.json")
        try Data("[{\"id\":".utf8).write(to: URL(fileURLWithPath: corrupt))

        let (loaded, warnings) = store.load()
        #expect(loaded == [kept])
        #expect(warnings.count == 1 && warnings[0].contains(corrupt + ".unreadable"), "\(warnings)")
    }

    @Test func aBatchCountsForTheHighestSequenceByItsLastMember() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let store = OutboxStore(stateDirectory: scratch.path)
        try store.save(batch: (7...9).map { OutboxStoreTests.delivery($0) })
        // As in an outbox from before the id counter was kept: the names count.
        try FileManager.default.removeItem(atPath: scratch.file("outbox-ids"))
        #expect(OutboxStore(stateDirectory: scratch.path).highestSequence() == 9)
    }
}

extension OutboxBatchStoreTests {
    /// Removals made together leave the files one removal after another leaves.
    @Test func removalsTogetherLeaveWhatRemovalsOneByOneLeave() throws {
        func store(_ scratch: ScratchDirectory) throws -> OutboxStore {
            let store = OutboxStore(stateDirectory: scratch.path)
            try store.save(batch: (1...4).map { OutboxStoreTests.delivery($0) })
            try store.save(batch: (5...7).map { OutboxStoreTests.delivery($0) })
            // A member that changed after its batch was written has a file of its own.
            var changed = OutboxStoreTests.delivery(6)
            changed.attempts = 1
            try store.save(changed)
            return store
        }
        let ids = [1, 2, 5, 3, 4, 6].map { OutboxStoreTests.delivery($0).id }
        let (together, oneByOne) = (try ScratchDirectory(), try ScratchDirectory())
        defer {
            together.remove()
            oneByOne.remove()
        }
        let a = try store(together), b = try store(oneByOne)
        #expect(a.remove(ids).isEmpty)
        for id in ids { try b.remove(id) }
        #expect(try OutboxStoreTests.names(a) == OutboxStoreTests.names(b))
        for name in try OutboxStoreTests.names(a) {
            let contents = { (store: OutboxStore) in FileManager.default.contents(atPath: (store.directory as NSString).appendingPathComponent(name)) }
            #expect(contents(a) == contents(b), "\(name)")
        }
        #expect(OutboxStore(stateDirectory: together.path).load().0 == OutboxStore(stateDirectory: oneByOne.path).load().0)
        #expect(OutboxStore(stateDirectory: together.path).load().0.map(\.sequence) == [7])
    }
}
