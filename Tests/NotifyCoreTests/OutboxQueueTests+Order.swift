import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore

/// The queue's order and concurrency: one delivery per recipient and platform at a time,
/// in sequence order, recipients side by side up to the places, and lanes taking turns.
extension OutboxQueueTests {
    @Test func sameRecipientAndPlatformGoOneAtATimeInSequenceOrder() {
        let first = Self.delivery(1), second = Self.delivery(2), third = Self.delivery(3)
        var queue = Self.queue([third, first, second])
        #expect(Self.ids(queue.queued) == Self.ids([first, second, third]))

        #expect(Self.ids(queue.takeReady(now: Self.at(0))) == [first.id])
        #expect(queue.takeReady(now: Self.at(0)).isEmpty)
        queue.finished(first.id, .delivered, now: Self.at(1))
        #expect(Self.ids(queue.takeReady(now: Self.at(1))) == [second.id])
        #expect(queue.takeReady(now: Self.at(1)).isEmpty)
        queue.finished(second.id, .delivered, now: Self.at(2))
        #expect(Self.ids(queue.takeReady(now: Self.at(2))) == [third.id])
        queue.finished(third.id, .delivered, now: Self.at(3))
        #expect(queue.queued.isEmpty)
        #expect(queue.inFlightCount == 0)
    }

    @Test func aDeliveryAddedLateWithAnEarlierSequenceGoesFirst() {
        let later = Self.delivery(5), earlier = Self.delivery(2)
        var queue = Self.queue([later])
        queue.add(earlier)
        #expect(Self.ids(queue.takeReady(now: Self.at(0))) == [earlier.id])
    }

    @Test func differentRecipientsGoSideBySideUpToTheConcurrency() {
        let bob = Self.delivery(1, to: "bob"), carol = Self.delivery(2, to: "carol")
        let dave = Self.delivery(3, to: "dave"), erin = Self.delivery(4, to: "erin")
        var queue = Self.queue([bob, carol, dave, erin], concurrency: 2)

        #expect(Self.ids(queue.takeReady(now: Self.at(0))) == [bob.id, carol.id])
        #expect(queue.inFlightCount == 2)
        #expect(queue.takeReady(now: Self.at(0)).isEmpty)

        queue.finished(carol.id, .delivered, now: Self.at(1))
        #expect(Self.ids(queue.takeReady(now: Self.at(1))) == [dave.id])
        queue.finished(bob.id, .delivered, now: Self.at(2))
        #expect(Self.ids(queue.takeReady(now: Self.at(2))) == [erin.id])
        #expect(queue.inFlightCount == 2)
    }

    /// Lanes (a recipient's next messages handed over before the one under way is
    /// answered) take a few messages past one that waits for a place, then empty and
    /// leave their place to the oldest waiting: the recipients take turns.
    @Test func lanesTakeTurnsWithRecipientsWaitingForAPlace() {
        let ann = (0..<8).map { Self.delivery($0 * 3, to: "ann") }
        let ben = (0..<8).map { Self.delivery($0 * 3 + 1, to: "ben") }
        let cat = (0..<8).map { Self.delivery($0 * 3 + 2, to: "cat") }
        var queue = Self.queue(ann + ben + cat, concurrency: 2)
        let turn = OutboxQueue.turn

        let first = queue.takeReady(now: Self.at(0), depth: 16)
        #expect(Set(Self.ids(first)) == Set(Self.ids(ann.prefix(turn + 1) + ben.prefix(turn + 1))), "cat waits; ann and ben take their turns")
        #expect(queue.takeReady(now: Self.at(0), depth: 16).isEmpty, "and no more while cat waits")
        for delivery in ann.prefix(turn + 1) { queue.finished(delivery.id, .delivered, now: Self.at(1)) }
        #expect(Self.ids(queue.takeReady(now: Self.at(1), depth: 16)).first == cat[0].id, "ann's place goes to cat")
        // With no one waiting for a place, a lane takes its recipient's next messages.
        var alone = Self.queue(ann, concurrency: 2)
        #expect(Self.ids(alone.takeReady(now: Self.at(0), depth: 16)) == Self.ids(ann))
    }

    @Test func oneMessageToSeveralPlatformsGoesSideBySide() {
        let apns = Self.delivery(1, .apns), fcm = Self.delivery(1, .fcm), wns = Self.delivery(1, .wns)
        let nextApns = Self.delivery(2, .apns)
        var queue = Self.queue([apns, fcm, wns, nextApns])
        #expect(Set(Self.ids(queue.takeReady(now: Self.at(0)))) == Set([apns.id, fcm.id, wns.id]))
        #expect(queue.takeReady(now: Self.at(0)).isEmpty)
    }

    @Test func theSameNameOnAnotherPlatformIsAnotherKey() {
        let first = Self.delivery(1, to: "bob", .apns), second = Self.delivery(2, to: "bob", .wns)
        let third = Self.delivery(3, to: "carol", .apns)
        var queue = Self.queue([first, second, third])
        #expect(Self.ids(queue.takeReady(now: Self.at(0))) == [first.id, second.id, third.id])
    }

    @Test func concurrencyBelowOneMeansOne() {
        var queue = OutboxQueue(backoff: Self.backoff, concurrency: 0)
        queue.setAccount(Self.alice)
        #expect(queue.concurrency == 1)
        queue.add(Self.delivery(1, to: "bob"))
        queue.add(Self.delivery(2, to: "carol"))
        #expect(queue.takeReady(now: Self.at(0)).count == 1)
    }
}
