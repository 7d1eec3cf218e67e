import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore

/// The outbox's lane bookkeeping: a lane lasts while something of its key is in flight or
/// waits for its feeder, and breaks at the first message not delivered.
struct OutboxLanesTests {
    private static func delivery(_ sequence: Int, to: String = "bob") -> Delivery {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        return Delivery(sequence: sequence, to: to, platform: .apns, message: "m\(sequence)", createdAt: start, expiresAt: start)
    }

    @Test func aLaneEndsOnceNothingOfItsKeyIsLeftInIt() {
        var lanes = OutboxLanes()
        let (first, second) = (Self.delivery(1), Self.delivery(2))
        let key = first.orderKey
        let entered = lanes.enter(key)
        #expect(!entered.feeding)
        let again = lanes.enter(key)
        #expect(again.lane == entered.lane, "one lane per key")
        let startsFeeder = lanes.waitForFeeder(second)
        #expect(startsFeeder, "no feeder yet: the caller starts one")
        #expect(lanes.waitsToBeHanded(second) && !lanes.waitsToBeHanded(first))
        let third = lanes.enter(key)
        #expect(third.feeding)
        let startsAnother = lanes.waitForFeeder(Self.delivery(3))
        #expect(!startsAnother, "the feeder takes it too")
        let taken = lanes.takeToHand(key)
        #expect(taken?.lane == entered.lane)
        #expect(taken?.deliveries.map(\.sequence) == [2, 3])
        let none = lanes.takeToHand(key)
        #expect(none == nil)
        let afterFeeder = lanes.feederDone(key)
        #expect(afterFeeder == nil, "three still in flight")
        let returns = (1...3).map { _ in lanes.returned(key, delivered: true) }
        #expect(returns == [nil, nil, entered.lane], "ended with the last")
        #expect(lanes.isEmpty)
        let next = lanes.enter(key)
        #expect(next.lane != entered.lane, "a new lane, numbered anew for the backend")
    }

    @Test func aMessageNotDeliveredBreaksItsLaneAlone() {
        var lanes = OutboxLanes()
        let (bob, carol) = (Self.delivery(1).orderKey, Self.delivery(2, to: "carol").orderKey)
        _ = lanes.enter(bob)
        _ = lanes.enter(bob)
        _ = lanes.enter(carol)
        let ended = lanes.returned(bob, delivered: false)
        #expect(ended == nil, "one still in flight")
        #expect(lanes.isBroken(bob) && !lanes.isBroken(carol))
        #expect(lanes.brokenKeys == [bob])
        #expect(lanes.isBroken("gone"), "a key with no lane takes no more")
    }
}
