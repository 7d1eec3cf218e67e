import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore
import NotifyTestSupport

/// The outbox queue over time: expiry, purging, and when it next needs waking. Uses the
/// helpers of `OutboxQueueTests`.
struct OutboxQueueExpiryTests {
    // MARK: Expiry

    @Test func expiryMovesWaitingDeliveriesToDeadButKeepsThoseInFlight() throws {
        let inFlight = OutboxQueueTests.delivery(1, to: "bob", expiresAfter: 100)
        let waiting = OutboxQueueTests.delivery(2, to: "carol", expiresAfter: 100)
        let fresh = OutboxQueueTests.delivery(3, to: "dave", expiresAfter: 1000)
        var queue = OutboxQueueTests.queue([inFlight, waiting, fresh], concurrency: 1)
        #expect(OutboxQueueTests.ids(queue.takeReady(now: OutboxQueueTests.at(0))) == [inFlight.id])

        #expect(queue.expire(now: OutboxQueueTests.at(99.999)).isEmpty)
        let expired = queue.expire(now: OutboxQueueTests.at(100))
        #expect(OutboxQueueTests.ids(expired) == [waiting.id])
        let gone = try #require(expired.first)
        #expect(gone.state == .expired)
        #expect(gone.nextAttemptAt == nil)
        #expect(gone.lastError?.code == .timeout)
        #expect(gone.status.expiresAt == nil)
        #expect(OutboxQueueTests.ids(queue.queued) == [inFlight.id, fresh.id])
        #expect(Array(queue.dead) == expired)

        // The one in flight still gets its result.
        let deliveredResult = queue.finished(inFlight.id, .delivered, now: OutboxQueueTests.at(101))
        let delivered = try #require(deliveredResult)
        #expect(delivered.state == .delivered)
        #expect(queue.expire(now: OutboxQueueTests.at(101)).isEmpty)
        #expect(OutboxQueueTests.ids(queue.queued) == [fresh.id])
    }

    /// An active delivery never tried whose record's place is known expires as a deferred
    /// one does: kept with that place, its record left as queued, not written whole. One
    /// tried, or whose place is not known, is written whole.
    @Test func anUntriedDeliveryWithAKnownPlaceExpiresWithoutBeingWrittenAgain() throws {
        let tried = OutboxQueueTests.delivery(1, to: "bob", expiresAfter: 100)
        let placed = OutboxQueueTests.delivery(2, to: "carol", expiresAfter: 100)
        let unplaced = OutboxQueueTests.delivery(3, to: "dave", expiresAfter: 100)
        let cancelled = OutboxQueueTests.delivery(4, to: "erin", expiresAfter: 100)
        let place = StoredEntry(offset: 40, length: 200)
        var queue = OutboxQueueTests.queue([], concurrency: 1)
        queue.add(tried, stored: .inOwnFile)
        queue.add(placed, stored: place)
        queue.add(unplaced)
        queue.add(cancelled, stored: StoredEntry(offset: 240, length: 200))
        #expect(OutboxQueueTests.ids(queue.takeReady(now: OutboxQueueTests.at(0))) == [tried.id])
        queue.finished(tried.id, .transient(retryAfter: 500, error: OutboxQueueTests.unavailable), now: OutboxQueueTests.at(1))
        #expect(queue.cancel(cancelled.id) != nil)
        #expect(queue.untriedPlaces == [placed.id: place])

        let expired = queue.expireKeepingPlaces(now: OutboxQueueTests.at(100))
        #expect(OutboxQueueTests.ids(expired.whole) == [tried.id, unplaced.id])
        #expect(expired.inPlace.map(\.id) == [placed.id] && expired.inPlace.allSatisfy { !$0.tried })
        #expect(queue.dead.map(\.id) == [tried.id, placed.id, unplaced.id])
        #expect(queue.dead.indices.map { queue.dead.stored(at: $0) } == [.inOwnFile, place, .inOwnFile])
        #expect(queue.untriedPlaces.isEmpty)
    }

    @Test func anExpiredRetryKeepsTheErrorItLastHad() throws {
        let first = OutboxQueueTests.delivery(1, expiresAfter: 100)
        var queue = OutboxQueueTests.queue([first])
        _ = queue.takeReady(now: OutboxQueueTests.at(0))
        queue.finished(first.id, .transient(retryAfter: 50, error: OutboxQueueTests.unavailable), now: OutboxQueueTests.at(0))
        let expired = queue.expire(now: OutboxQueueTests.at(200))
        #expect(OutboxQueueTests.ids(expired) == [first.id])
        #expect(expired.first?.lastError == OutboxQueueTests.unavailable)
        #expect(expired.first?.attempts == 1)
        #expect(queue.queued.isEmpty)
    }

    /// A recipient's message given up at its expiry takes its backoff with it: the next
    /// message to that recipient goes out at once, while a recipient with messages still
    /// queued keeps waiting out its own.
    @Test func theNextMessageAfterAnExpiryDoesNotInheritItsBackoff() throws {
        let first = OutboxQueueTests.delivery(1, to: "bob", expiresAfter: 10)
        let carol = OutboxQueueTests.delivery(2, to: "carol", expiresAfter: 10)
        let carolLater = OutboxQueueTests.delivery(3, to: "carol", expiresAfter: 1000)
        var queue = OutboxQueueTests.queue([first, carol, carolLater], concurrency: 4)
        _ = queue.takeReady(now: OutboxQueueTests.at(0))
        // Both back off far past the expiry: the retry would come at 500.
        queue.finished(first.id, .transient(retryAfter: 500, error: OutboxQueueTests.unavailable), now: OutboxQueueTests.at(1))
        queue.finished(carol.id, .transient(retryAfter: 500, error: OutboxQueueTests.unavailable), now: OutboxQueueTests.at(1))
        #expect(Set(OutboxQueueTests.ids(queue.expire(now: OutboxQueueTests.at(10)))) == [first.id, carol.id])
        let later = OutboxQueueTests.delivery(4, to: "bob", expiresAfter: 1000)
        queue.add(later)
        #expect(!queue.isWaitingForRetry(later.id, now: OutboxQueueTests.at(11)))
        #expect(OutboxQueueTests.ids(queue.takeReady(now: OutboxQueueTests.at(11))) == [later.id])
        #expect(queue.isWaitingForRetry(carolLater.id, now: OutboxQueueTests.at(11)), "carol still owes a retry")
    }

    @Test func expiryAppliesWhilePaused() throws {
        let first = OutboxQueueTests.delivery(1, expiresAfter: 100), second = OutboxQueueTests.delivery(2, expiresAfter: 100)
        var queue = OutboxQueueTests.queue([first, second], backoff: OutboxQueueTests.quickBackoff)
        _ = queue.takeReady(now: OutboxQueueTests.at(0))
        queue.finished(first.id, .transient(retryAfter: 0.5, error: OutboxQueueTests.unavailable), now: OutboxQueueTests.at(0.5))
        queue.markAnswered([first.id])  // the sender was told "queued"
        _ = queue.takeReady(now: OutboxQueueTests.at(1))
        queue.finished(first.id, .unauthorized(OutboxQueueTests.refused), now: OutboxQueueTests.at(1))
        #expect(queue.paused)
        #expect(Set(OutboxQueueTests.ids(queue.expire(now: OutboxQueueTests.at(100)))) == [first.id, second.id])
        #expect(queue.queued.isEmpty)
    }

    @Test func purgeDeadEmptiesDead() throws {
        let first = OutboxQueueTests.delivery(1, to: "bob"), second = OutboxQueueTests.delivery(2, to: "carol", expiresAfter: 10)
        let third = OutboxQueueTests.delivery(3, to: "dave")
        var queue = OutboxQueueTests.queue([first, second, third], concurrency: 1, backoff: OutboxQueueTests.quickBackoff)
        _ = queue.takeReady(now: OutboxQueueTests.at(0))
        queue.finished(first.id, .transient(retryAfter: 0.5, error: OutboxQueueTests.unavailable), now: OutboxQueueTests.at(0.5))
        queue.markAnswered([first.id])  // the sender was told "queued"
        _ = queue.takeReady(now: OutboxQueueTests.at(1))
        queue.finished(first.id, .failed(OutboxQueueTests.rejected), now: OutboxQueueTests.at(1))
        _ = queue.expire(now: OutboxQueueTests.at(10))
        let purged = queue.purgeDead()
        #expect(Set(purged) == [first.id, second.id])
        #expect(queue.dead.isEmpty)
        #expect(queue.purgeDead().isEmpty)
        #expect(OutboxQueueTests.ids(queue.queued) == [third.id])
    }

    @Test func deliveriesLoadedAsFailedOrExpiredGoToDead() {
        var failed = OutboxQueueTests.delivery(1)
        failed.state = .failed
        var expired = OutboxQueueTests.delivery(2)
        expired.state = .expired
        let waiting = OutboxQueueTests.delivery(3)
        var queue = OutboxQueueTests.queue([failed, expired, waiting])
        #expect(OutboxQueueTests.ids(queue.dead) == [failed.id, expired.id])
        #expect(OutboxQueueTests.ids(queue.queued) == [waiting.id])
        #expect(OutboxQueueTests.ids(queue.takeReady(now: OutboxQueueTests.at(0))) == [waiting.id])
    }

    // MARK: Waking

    @Test func nextWakeIsTheEarliestRetryOrExpiry() throws {
        var empty = OutboxQueueTests.queue([])
        #expect(empty.nextWake(now: OutboxQueueTests.at(0)) == nil)
        #expect(empty.takeReady(now: OutboxQueueTests.at(0)).isEmpty)

        let bob = OutboxQueueTests.delivery(1, to: "bob", expiresAfter: 500)
        let carol = OutboxQueueTests.delivery(2, to: "carol", expiresAfter: 300)
        var queue = OutboxQueueTests.queue([bob, carol])
        #expect(queue.nextWake(now: OutboxQueueTests.at(0)) == OutboxQueueTests.at(300))

        _ = queue.takeReady(now: OutboxQueueTests.at(0))
        queue.finished(bob.id, .transient(retryAfter: 60, error: OutboxQueueTests.unavailable), now: OutboxQueueTests.at(0))
        #expect(queue.nextWake(now: OutboxQueueTests.at(1)) == OutboxQueueTests.at(60), "the retry comes before either expiry")

        queue.finished(carol.id, .transient(retryAfter: 400, error: OutboxQueueTests.unavailable), now: OutboxQueueTests.at(0))
        #expect(queue.nextWake(now: OutboxQueueTests.at(1)) == OutboxQueueTests.at(60))
        _ = queue.takeReady(now: OutboxQueueTests.at(60))
        queue.finished(bob.id, .transient(retryAfter: 1000, error: OutboxQueueTests.unavailable), now: OutboxQueueTests.at(60))
        #expect(queue.nextWake(now: OutboxQueueTests.at(61)) == OutboxQueueTests.at(300), "carol's expiry now comes before both retries")
    }

    @Test func nextWakeIgnoresRetryTimesThatHavePassed() throws {
        let bob = OutboxQueueTests.delivery(1, to: "bob", expiresAfter: 500)
        var queue = OutboxQueueTests.queue([bob])
        _ = queue.takeReady(now: OutboxQueueTests.at(0))
        queue.finished(bob.id, .transient(retryAfter: 60, error: OutboxQueueTests.unavailable), now: OutboxQueueTests.at(0))
        #expect(queue.nextWake(now: OutboxQueueTests.at(60)) == OutboxQueueTests.at(500))
    }

    @Test func nextWakeDoesNotPointIntoThePastWhileAnExpiredDeliveryIsInFlight() {
        // The outbox sleeps until nextWake, then expires and starts what it can. A delivery
        // that expired while its attempt is under way cannot be expired yet, so a wake at
        // its (past) expiry does nothing but ask for the same past wake again.
        let bob = OutboxQueueTests.delivery(1, to: "bob", expiresAfter: 100)
        var queue = OutboxQueueTests.queue([bob])
        _ = queue.takeReady(now: OutboxQueueTests.at(0))
        let now = OutboxQueueTests.at(150)
        #expect(queue.expire(now: now).isEmpty)
        let wake = queue.nextWake(now: now)
        #expect(wake == nil || wake! > now, "wake at \(String(describing: wake?.timeIntervalSince(OutboxQueueTests.start)))")
    }

    @Test func aDeliveryRefusedForGoodDoesNotHoldBackTheNextOne() {
        let first = OutboxQueueTests.delivery(1)
        let second = OutboxQueueTests.delivery(2)
        var queue = OutboxQueueTests.queue([first, second])
        #expect(OutboxQueueTests.ids(queue.takeReady(now: OutboxQueueTests.at(0))) == [first.id])
        queue.finished(first.id, .transient(retryAfter: 60, error: OutboxQueueTests.unavailable), now: OutboxQueueTests.at(0))
        queue.markAnswered([first.id])  // the sender was told "queued"
        #expect(OutboxQueueTests.ids(queue.takeReady(now: OutboxQueueTests.at(60))) == [first.id])
        queue.finished(first.id, .failed(OutboxQueueTests.rejected), now: OutboxQueueTests.at(60))
        #expect(queue.dead.map(\.id) == [first.id], "kept: it had waited in the outbox")
        #expect(OutboxQueueTests.ids(queue.takeReady(now: OutboxQueueTests.at(60))) == [second.id], "no leftover retry time for bob")
    }

    /// A machine that slept through the expiry of thousands in flight (16 connections of 100
    /// HTTP/2 streams each, lanes 16 deep): the mark that leaves them out is still one its
    /// own reader takes, and still covers what was reported expired.
    @Test func aMarkLeavingOutThousandsInFlightIsReadBack() throws {
        let directory = try ScratchDirectory()
        defer { directory.remove() }
        let first = 1_000_000
        var queue = OutboxQueueTests.queue([], concurrency: 16)
        for number in 0..<6400 {
            var delivery = Delivery(sequence: first + number, to: "user\(number % 400)", platform: .apns, message: "m",
                                    createdAt: OutboxQueueTests.start, expiresAt: OutboxQueueTests.start.addingTimeInterval(60), account: OutboxQueueTests.alice)
            delivery.senderWaiting = false
            queue.add(delivery)
        }
        #expect(queue.takeReady(now: OutboxQueueTests.start, depth: 16, requestsPerConnection: 100).count == 6400)
        let reported = Delivery(sequence: first + 6400, to: "dave", platform: .apns, message: "m",
                                createdAt: OutboxQueueTests.start, expiresAt: OutboxQueueTests.start.addingTimeInterval(60), account: OutboxQueueTests.alice)
        queue.add(reported, stored: StoredEntry(offset: 0, length: 100))
        let now = OutboxQueueTests.start.addingTimeInterval(120)
        let expired = queue.expireKeepingPlaces(now: now)
        #expect(expired.inPlace.map(\.id) == [reported.id] && expired.beingTried.count == 6400)
        #expect(OutboxStore(stateDirectory: directory.path).recordExpiry(of: expired.inPlace, at: now, beingTried: expired.beingTried).isEmpty)
        let read = OutboxExpiryMark(path: directory.file("outbox-expired"))
        let warning = read.load()
        #expect(warning == nil, "\(warning ?? "")")
        #expect(read.covers(sequence: reported.sequence, expiresAt: reported.expiresAt))
        #expect(!read.covers(sequence: first, expiresAt: reported.expiresAt), "in flight, left out")
    }

    /// A deferred message expires when its record says, whatever the clock reads: one that
    /// reads 1970 before it is set, or a date past 2106.
    @Test(arguments: [86_400.0 * 12, 5_000_000_000.5])
    func aDeferredExpiryIsTheSecondItsRecordSaysOnAnyClock(expiry seconds: Double) {
        var deferred = DeferredDeliveries()
        let created = Date(timeIntervalSince1970: seconds - 86_400)
        let delivery = Delivery(sequence: 1, to: "bob", platform: .apns, message: "", createdAt: created,
                                expiresAt: Date(timeIntervalSince1970: seconds), account: OutboxQueueTests.alice)
        deferred.append(delivery, stored: StoredEntry(offset: 0, length: 10), bytes: 1)
        let whole = Date(timeIntervalSince1970: seconds.rounded(.up))
        #expect(deferred.delivery(at: 0).expiresAt == whole)
        #expect(deferred.expired(now: whole.addingTimeInterval(-0.5)).isEmpty)
        #expect(deferred.expired(now: whole) == [0])
    }

    /// A delivery whose attempt's outcome is still being written expires at the pass
    /// after the write, not before it: its expiry written first would be overwritten by
    /// the outcome, a record still queued. Nor is a wake armed for it meanwhile.
    @Test func anExpiryWaitsForTheOutcomeBeingWritten() {
        let delivery = OutboxQueueTests.delivery(1, expiresAfter: 100)
        var queue = OutboxQueueTests.queue([delivery])
        let later = OutboxQueueTests.start.addingTimeInterval(200)
        #expect(queue.expireKeepingPlaces(now: later, beingWritten: [delivery.id]).isEmpty)
        #expect(queue.nextWake(now: later, beingWritten: [delivery.id]) == nil)
        #expect(queue.expireKeepingPlaces(now: later).whole.map(\.id) == [delivery.id])
    }
}
