import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore

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
        commits.collect(Self.delivery(1))
        let taken = commits.takeBatch()
        let (first, batch) = try #require(taken)
        #expect(batch.map(\.sequence) == [1])
        for sequence in 2...4 { commits.collect(Self.delivery(sequence)) }
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
        commits.collect(Self.delivery(1))
        commits.collect(Self.delivery(2))
        let taken = commits.takeBatch()
        let (number, batch) = try #require(taken)
        commits.written(number, batch, failure: .storage("disk full"))

        #expect(commits.takeFailure([batch[0].id]) == .storage("disk full"))
        #expect(commits.takeFailure([batch[0].id]) == nil)
        #expect(commits.takeFailure([batch[1].id]) == .storage("disk full"))
    }
}
