import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore

/// The failed and expired part of the outbox: kept as small entries without their text,
/// in the order of their ids whatever order they failed in, each found by id.
struct DeadDeliveriesTests {
    static let account = AccountKey(user: "alice", backend: "http://127.0.0.1:1")

    static func dead(_ sequence: Int, _ platform: Platform = .apns, to: String = "bob", expired: Bool = true, attempts: Int = 0,
                     error: WireError? = OutboxQueue.expiryError) -> Delivery {
        var delivery = Delivery(sequence: sequence, to: to, platform: platform, message: "message \(sequence)",
                                createdAt: Date(timeIntervalSinceReferenceDate: 1000.25 + Double(sequence)),
                                expiresAt: Date(timeIntervalSinceReferenceDate: 9000), account: account)
        delivery.state = expired ? .expired : .failed
        delivery.attempts = attempts
        delivery.lastError = error
        return delivery
    }

    /// What a kept entry must still say: all a listing shows but the first words.
    static func listed(_ delivery: Delivery) -> DeliveryStatus {
        var status = delivery.status
        status.preview = ""
        return status
    }

    @Test func anEntryIsListedAsTheDeliveryWasWithoutItsText() {
        let failed = Self.dead(3, .fcmv1, to: "carol", expired: false, attempts: 70_000, error: WireError(code: .backendRejected, message: "HTTP 400"))
        let unexplained = Self.dead(4, .wns, error: nil)
        var dead = DeadDeliveries()
        dead.append(contentsOf: [failed, unexplained])
        #expect(dead.map(Self.listed) == [failed, unexplained].map(Self.listed))
        #expect(dead.allSatisfy { $0.message.isEmpty && $0.account == Self.account })
        #expect(dead[0].createdAt == failed.createdAt, "to the fraction of a second")
        #expect(MemoryLayout<DeadDeliveries.Entry>.stride <= 40)
    }

    /// One that expired while deferred keeps where its record is queued, in its batch; the
    /// others have theirs in their own files, written when they failed or expired.
    @Test func eachKeepsWhereItsRecordIs() {
        let inBatch = StoredEntry(offset: 120, length: 345)
        var dead = DeadDeliveries()
        dead.append(Self.dead(5))
        dead.append(contentsOf: [(Self.dead(2), inBatch), (Self.dead(7), .inOwnFile)])
        #expect(dead.indices.map { dead.stored(at: $0) } == [inBatch, .inOwnFile, .inOwnFile])
        #expect(dead.map(\.sequence) == [2, 5, 7])
    }

    @Test func entriesStayInTheOrderOfTheirIdsWhateverOrderTheyCameIn() {
        var dead = DeadDeliveries()
        dead.append(Self.dead(9))
        // An expiry: the active part's first, then the deferred part's.
        dead.append(contentsOf: [Self.dead(5, .wns), Self.dead(2), Self.dead(7), Self.dead(5, .apns)])
        dead.append(Self.dead(1))
        #expect(dead.map(\.id) == [1, 2, 5, 5, 7, 9].enumerated().map { index, sequence in
            Delivery.id(sequence: sequence, platform: index == 3 ? .wns : .apns)
        })
        #expect(dead.indices.map(dead.id(at:)) == dead.map(\.id))
    }

    @Test func eachIsFoundByItsIdAndCopiesSharingASequenceApart() throws {
        var dead = DeadDeliveries()
        let copies = [Self.dead(5, .apns), Self.dead(5, .fcm), Self.dead(5, .wns)]
        dead.append(contentsOf: [Self.dead(4)] + copies + [Self.dead(6)])
        for copy in copies { #expect(dead.position(of: copy.id).map { dead[$0].platform } == copy.platform, "\(copy.id)") }
        #expect(dead.position(of: Self.dead(5, .gcm).id) == nil)
        #expect(dead.position(of: "not an id") == nil)
        #expect(dead.positions(of: 5).map(dead.id(at:)) == copies.map(\.id))

        let fcm = try #require(dead.position(of: copies[1].id))
        #expect(dead.remove(at: fcm).id == copies[1].id)
        #expect(dead.position(of: copies[1].id) == nil)
        #expect(dead.position(of: copies[2].id).map(dead.id(at:)) == copies[2].id)
        #expect(dead.count == 4)
    }

    /// One whose id is not the one its sequence gives (a file edited by hand) is kept whole,
    /// in its place among the others, and found by its id.
    @Test func aDeliveryWithAnIDOfItsOwnIsKeptWholeInItsPlace() throws {
        var odd = Self.dead(3)
        odd.id = "hand-made"
        var dead = DeadDeliveries()
        dead.append(contentsOf: [Self.dead(8), odd, Self.dead(1)])
        #expect(dead.map(\.id) == [Self.dead(1).id, "hand-made", Self.dead(8).id])
        let position = try #require(dead.position(of: "hand-made"))
        #expect(dead[position] == odd, "whole, its text with it")
        #expect(dead.remove(at: position) == odd)
        #expect(dead.map(\.id) == [Self.dead(1).id, Self.dead(8).id])
    }

    @Test func perRecipientCountsAndTheOldestWithoutMakingEachDelivery() {
        var odd = Self.dead(1, to: "carol")
        odd.id = "hand-made"
        var dead = DeadDeliveries()
        dead.append(contentsOf: [Self.dead(2), Self.dead(3, .wns), Self.dead(4, to: "carol"), odd])
        let tallies = dead.perRecipient
        #expect(tallies.count == 2)
        #expect(tallies["bob"]?.count == 2 && tallies["bob"]?.oldest == Self.dead(2).createdAt)
        #expect(tallies["carol"]?.count == 2 && tallies["carol"]?.oldest == odd.createdAt)
    }

    @Test func removingAllGivesTheirIdsAndLeavesNothing() {
        var dead = DeadDeliveries()
        dead.append(contentsOf: [Self.dead(2), Self.dead(1, .wns)])
        #expect(dead.removeAll() == [Self.dead(1, .wns).id, Self.dead(2).id])
        #expect(dead.isEmpty && dead.perRecipient.isEmpty)
        #expect(dead.position(of: Self.dead(2).id) == nil)
    }
}
