import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// The outbox's group commit bookkeeping: what gathers while a batch is written goes in
/// the next one, and each sender learns the outcome of its own batch.
struct GroupCommitTests {
    private static func delivery(_ sequence: Int) -> Delivery {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        return Delivery(sequence: sequence, to: "bob", platform: .apns, message: "m\(sequence)", createdAt: start, expiresAt: start)
    }

    @Test func whatGathersWhileABatchIsWrittenGoesInTheNext() throws {
        var commits = GroupCommit()
        #expect(commits.takeBatch() == nil)
        commits.collect([Self.delivery(1)])
        let taken = commits.takeBatch()
        let (first, batch) = try #require(taken)
        #expect(batch.map(\.sequence) == [1])
        for sequence in 2...4 { commits.collect([Self.delivery(sequence)]) }
        let takenNext = commits.takeBatch()
        let (second, next) = try #require(takenNext)
        #expect(second == first + 1)
        #expect(next.map(\.sequence) == [2, 3, 4])
        #expect(commits.batch(of: next[0].id) == second)
        #expect(!commits.isWritten(first) && !commits.isWritten(second))

        commits.written(first, batch, failure: nil)
        #expect(commits.isWritten(first) && !commits.isWritten(second))
        #expect(commits.batch(of: batch[0].id) == nil)
        #expect(commits.takeFailure(batch.map(\.id)) == nil)
    }

    @Test func aFailedWriteIsReportedOnceToEachSenderInTheBatch() throws {
        var commits = GroupCommit()
        commits.collect([Self.delivery(1)])
        commits.collect([Self.delivery(2)])
        let taken = commits.takeBatch()
        let (number, batch) = try #require(taken)
        commits.written(number, batch, failure: .storage("disk full"))

        #expect(commits.takeFailure([batch[0].id]) == .storage("disk full"))
        #expect(commits.takeFailure([batch[0].id]) == nil)
        #expect(commits.takeFailure([batch[1].id]) == .storage("disk full"))
    }

    /// A batch is one file read back whole at start: it stops at the budget, the rest goes
    /// in the next, and the copies of one message are never parted.
    @Test func aBatchStopsAtItsBudgetWithoutPartingAMessage() throws {
        var commits = GroupCommit()
        let copies = [Platform.apns, .fcm, .wns].enumerated().map { index, platform in
            var delivery = Self.delivery(10 + index)
            delivery.platform = platform
            return delivery
        }
        let size = copies.reduce(0) { $0 + OutboxEntryRecord.sizeBound(of: $1) }
        commits.collect([Self.delivery(1)])
        commits.collect(copies)
        commits.collect([Self.delivery(20)])
        // Room for the first message and part of the second: the second waits whole.
        let taken = commits.takeBatch(budget: OutboxEntryRecord.sizeBound(of: Self.delivery(1)) + size - 1)
        let (first, batch) = try #require(taken)
        #expect(batch.map(\.sequence) == [1])
        #expect(copies.allSatisfy { commits.batch(of: $0.id) == first + 1 }, "their senders wait for the next batch")
        // A message larger than the budget still goes, alone.
        let takenNext = commits.takeBatch(budget: size - 1)
        let (second, next) = try #require(takenNext)
        #expect(second == first + 1)
        #expect(next.map(\.sequence) == [10, 11, 12])
        #expect(commits.batch(of: Self.delivery(20).id) == second + 1)
        let takenLast = commits.takeBatch()
        #expect(takenLast.map { $0.1.map(\.sequence) } == [20])
    }

    /// A sender whose message did not fit waits for the batch it moved to, not for the one
    /// it was gathered for.
    @Test func aSenderWaitsForTheBatchItsMessageMovedTo() throws {
        var commits = GroupCommit()
        let (first, second) = (Self.delivery(1), Self.delivery(2))
        commits.collect([first])
        commits.collect([second])
        let gatheredFor = try #require(commits.unwrittenBatch(of: [second.id]))
        let taken = commits.takeBatch(budget: OutboxEntryRecord.sizeBound(of: first))
        let (number, batch) = try #require(taken)
        #expect(number == gatheredFor)
        commits.written(number, batch, failure: nil)
        #expect(commits.unwrittenBatch(of: [first.id]) == nil)
        #expect(commits.unwrittenBatch(of: [second.id]) == number + 1)
        let takenNext = commits.takeBatch()
        let (next, rest) = try #require(takenNext)
        commits.written(next, rest, failure: nil)
        #expect(commits.unwrittenBatch(of: [first.id, second.id]) == nil)
    }

    /// One batch is written at a time: what gathers meanwhile is taken once the write
    /// under way is over, whatever it came to, and whether it worked says whether the next
    /// batch may go out while it is written.
    @Test func noBatchIsTakenWhileOneIsBeingWritten() throws {
        var commits = GroupCommit()
        #expect(!commits.writesWork, "until a write has worked")
        commits.collect([Self.delivery(1)])
        let taken = commits.takeBatch()
        let (first, batch) = try #require(taken)
        commits.started(Task {})
        commits.collect([Self.delivery(2)])
        #expect(commits.takeBatch() == nil, "the first is still being written")
        commits.written(first, batch, failure: nil)
        #expect(commits.write == nil && commits.writesWork)
        let takenNext = commits.takeBatch()
        let (second, next) = try #require(takenNext)
        #expect(next.map(\.sequence) == [2])
        commits.started(Task {})
        commits.written(second, next, failure: .storage("disk full"))
        #expect(commits.write == nil && !commits.writesWork)
    }

    /// Sequences go on after the highest a start found on disk, and none is given twice.
    @Test func sequencesFollowTheHighestOnDisk() {
        var commits = GroupCommit()
        #expect(commits.takeSequence() == 1)
        commits.continueSequence(after: 41)
        let (next, after) = (commits.takeSequence(), commits.takeSequence())
        #expect(next == 42 && after == 43)
    }

    /// The bound holds: a batch of entries made of the characters JSON escapes longest is
    /// no larger on disk than the sum of their bounds.
    @Test func anEntryIsNeverLargerOnDiskThanItsBound() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let store = OutboxStore(stateDirectory: directory.path)
        let nasty = String(repeating: "\u{1}/\u{1F}\"\\", count: 200)
        let batch = (1...3).map { sequence in
            var delivery = Delivery(sequence: sequence, to: nasty, platform: .apns, message: nasty, createdAt: Date(), expiresAt: Date(),
                                    account: AccountKey(user: nasty, backend: nasty))
            delivery.lastError = WireError(code: .backendUnavailable, message: nasty)
            return delivery
        }
        try store.save(batch: batch)
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: store.directory).first { $0.hasSuffix(".json") })
        let written = try #require(FileManager.default.contents(atPath: store.directory + "/" + file)).count
        #expect(written <= batch.reduce(0) { $0 + OutboxEntryRecord.sizeBound(of: $1) })
    }

    /// Whatever one message holds, its copies fit one file: each string of an entry comes
    /// from the `send` request line or the `login` one, each at most 256 KiB.
    @Test func theLargestMessageFitsOneFile() {
        let line = WireCoding.maximumLineLength
        let copies = [Platform.apns, .fcm, .wns].map { platform in
            Delivery(sequence: 1, to: String(repeating: "b", count: line / 2), platform: platform, message: String(repeating: "m", count: line / 2),
                     createdAt: Date(), expiresAt: Date(), account: AccountKey(user: String(repeating: "a", count: line / 2), backend: String(repeating: "u", count: line / 2)))
        }
        #expect(copies.reduce(0) { $0 + OutboxEntryRecord.sizeBound(of: $1) } <= OutboxStore.largestFile)
    }
}
