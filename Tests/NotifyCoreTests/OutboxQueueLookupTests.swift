import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore

/// How the queue finds a delivery by id: a binary search on the sequence number ids begin
/// with, and what it falls back to when an entry from disk does not follow that rule.
struct OutboxQueueLookupTests {
    @Test func everyDeliveryIsFoundByIdWhateverOrderItCameIn() {
        let sequences = [7, 3, 11, 1, 5, 9, 2, 10, 4, 8, 6]
        let deliveries = sequences.map { OutboxQueueTests.delivery($0) } + [OutboxQueueTests.delivery(12, .fcm)]
        var queue = OutboxQueueTests.queue(deliveries)
        #expect(queue.queued.map(\.sequence) == Array(1...12))
        for delivery in deliveries { #expect(queue.delivery(delivery.id)?.sequence == delivery.sequence) }
        for missing in ["0000000000-apns", "0000000012-apns", "0000000013-apns", "0000000007-fcm", "7-apns", "", "-", "x-apns"] {
            #expect(queue.delivery(missing) == nil, "\(missing)")
        }
        queue.finished(OutboxQueueTests.delivery(1).id, .delivered, now: OutboxQueueTests.at(0))
        #expect(queue.delivery(OutboxQueueTests.delivery(1).id) == nil)
        #expect(queue.cancel(OutboxQueueTests.delivery(6).id)?.sequence == 6)
        #expect(queue.queued.map(\.sequence) == [2, 3, 4, 5, 7, 8, 9, 10, 11, 12])
        for sequence in [2, 3, 4, 5, 7, 8, 9, 10, 11] { #expect(queue.delivery(OutboxQueueTests.delivery(sequence).id) != nil) }
    }

    @Test func anEntryWhoseIdDoesNotFollowItsSequenceIsStillFound() {
        // Ids are made from the sequence number, but an entry edited by hand need not be.
        var odd = OutboxQueueTests.delivery(2)
        odd.id = "0000000009-apns"
        var named = OutboxQueueTests.delivery(4)
        named.id = "hand-made"
        var queue = OutboxQueueTests.queue([OutboxQueueTests.delivery(1), odd, OutboxQueueTests.delivery(3), named])
        #expect(queue.delivery("0000000009-apns")?.sequence == 2)
        #expect(queue.delivery("hand-made")?.sequence == 4)
        #expect(queue.delivery(OutboxQueueTests.delivery(3).id)?.sequence == 3)
        queue.finished(OutboxQueueTests.delivery(1).id, .delivered, now: OutboxQueueTests.at(0))
        #expect(OutboxQueueTests.ids(queue.takeReady(now: OutboxQueueTests.at(0))) == ["0000000009-apns"])
        queue.finished("0000000009-apns", .transient(retryAfter: nil, error: OutboxQueueTests.unavailable), now: OutboxQueueTests.at(1))
        #expect(queue.isWaitingForRetry("0000000009-apns", now: OutboxQueueTests.at(2)))
        #expect(queue.cancel("hand-made")?.sequence == 4)
    }

    @Test func copiesSharingASequenceNumberAreEachFound() {
        // Not made so today, but an entry on disk may have been.
        let apns = OutboxQueueTests.delivery(5, .apns), fcm = OutboxQueueTests.delivery(5, .fcm), wns = OutboxQueueTests.delivery(5, .wns)
        var queue = OutboxQueueTests.queue([OutboxQueueTests.delivery(4), wns, apns, OutboxQueueTests.delivery(6), fcm])
        for delivery in [apns, fcm, wns] { #expect(queue.delivery(delivery.id)?.platform == delivery.platform) }
        #expect(queue.cancel(fcm.id)?.platform == .fcm)
        #expect(queue.delivery(fcm.id) == nil)
        #expect(queue.delivery(wns.id)?.platform == .wns)
    }
}
