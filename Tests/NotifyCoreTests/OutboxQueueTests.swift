import Foundation
import NotifyProtocol
import Testing
@testable import NotifyCore

/// The outbox's scheduling, driven with explicit dates: no clocks, no waiting.
struct OutboxQueueTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static func at(_ seconds: Double) -> Date { start.addingTimeInterval(seconds) }

    /// First retry between 5 and 10 s, then 10–20 s, 20–40 s…
    static let backoff = Backoff(initial: 10, multiplier: 2, maximum: 1000)
    static let unavailable = WireError(code: .backendUnavailable, message: "HTTP 503")
    static let rejected = WireError(code: .backendRejected, message: "HTTP 400")
    static let refused = WireError(code: .unauthorized, message: "HTTP 403")

    static let alice = AccountKey(user: "alice", backend: "http://127.0.0.1:1")

    /// A message just accepted: its sender waits for the answer.
    static func delivery(_ sequence: Int, to: String = "bob", _ platform: Platform = .apns,
                                 expiresAfter: Double = 86400, account: AccountKey = alice) -> Delivery {
        var delivery = Delivery(sequence: sequence, to: to, platform: platform, message: "message \(sequence)",
                                createdAt: start, expiresAt: start.addingTimeInterval(expiresAfter), account: account)
        delivery.senderWaiting = true
        return delivery
    }

    /// A backoff whose first step is no longer than the half-second `Retry-After` some tests use.
    static let quickBackoff = Backoff(initial: 0.5, multiplier: 2, maximum: 1000)

    static func queue(_ deliveries: [Delivery], concurrency: Int = 4, backoff: Backoff = backoff) -> OutboxQueue {
        var queue = OutboxQueue(backoff: backoff, concurrency: concurrency, seed: 7)
        queue.setAccount(alice)
        for delivery in deliveries { queue.add(delivery) }
        return queue
    }

    static func ids(_ deliveries: some Sequence<Delivery>) -> [String] { deliveries.map(\.id) }

    // MARK: Retries

    @Test func aTransientFailureHoldsItsKeyForTheBackoffWhileOthersProceed() throws {
        let first = Self.delivery(1, to: "bob"), second = Self.delivery(2, to: "bob")
        let carol = Self.delivery(3, to: "carol")
        var queue = Self.queue([first, second, carol])
        #expect(Self.ids(queue.takeReady(now: Self.at(0))) == [first.id, carol.id])

        let failedResult = queue.finished(first.id, .transient(retryAfter: nil, error: Self.unavailable), now: Self.at(0))

        let failed = try #require(failedResult)
        #expect(failed.state == .queued)
        #expect(failed.attempts == 1)
        #expect(failed.lastError == Self.unavailable)
        let retry = try #require(failed.nextAttemptAt)
        #expect(retry >= Self.at(5) && retry <= Self.at(10), "first backoff step is 5–10 s, got \(retry.timeIntervalSince(Self.start))")
        #expect(queue.delivery(first.id)?.nextAttemptAt == retry)

        queue.finished(carol.id, .delivered, now: Self.at(1))
        let carolAgain = Self.delivery(4, to: "carol")
        queue.add(carolAgain)
        #expect(Self.ids(queue.takeReady(now: Self.at(1))) == [carolAgain.id])
        #expect(queue.takeReady(now: retry.addingTimeInterval(-0.001)).isEmpty)

        // The one that failed goes again first; the one behind it still waits.
        #expect(Self.ids(queue.takeReady(now: retry)) == [first.id])
        let deliveredResult = queue.finished(first.id, .delivered, now: retry)
        let delivered = try #require(deliveredResult)
        #expect(delivered.state == .delivered)
        #expect(delivered.attempts == 2)
        #expect(delivered.lastError == nil)
        #expect(delivered.nextAttemptAt == nil)
        #expect(Self.ids(queue.takeReady(now: retry)) == [second.id])
    }

    @Test func retryAfterIsHonouredExactly() throws {
        let first = Self.delivery(1), second = Self.delivery(2)
        var queue = Self.queue([first, second])
        _ = queue.takeReady(now: Self.at(0))
        let failedResult = queue.finished(first.id, .transient(retryAfter: 120, error: Self.unavailable), now: Self.at(3))
        let failed = try #require(failedResult)
        #expect(failed.nextAttemptAt == Self.at(123))
        #expect(queue.nextWake(now: Self.at(4)) == Self.at(123))
        #expect(queue.takeReady(now: Self.at(122.999)).isEmpty)
        #expect(Self.ids(queue.takeReady(now: Self.at(123))) == [first.id])
    }

    @Test func retryAfterIsHonouredPastRetryMaxUpTo30MinutesAndTheEntrySaysSo() throws {
        var queue = Self.queue([Self.delivery(1), Self.delivery(2, to: "carol")])
        _ = queue.takeReady(now: Self.at(0))
        let failedResult = queue.finished(Self.delivery(1).id, .transient(retryAfter: 7 * 86400, error: Self.unavailable), now: Self.at(0))
        let failed = try #require(failedResult)
        #expect(failed.nextAttemptAt == Self.at(1800))
        #expect(failed.lastError?.message.hasSuffix("(the backend asked to wait 604800 s, capped at the larger of retry_max and 30 min (1800 s))") == true)
        let honouredResult = queue.finished(Self.delivery(2, to: "carol").id, .transient(retryAfter: 1500, error: Self.unavailable), now: Self.at(0))
        let honoured = try #require(honouredResult)
        #expect(honoured.nextAttemptAt == Self.at(1500), "longer than retry_max (1000 s), and honoured")
    }

    /// A backend that could not be reached is watched by the probe: the wait grows past
    /// `retry_max`, and the probe's wake (`backendWorks`) ends it.
    @Test func anUnreachableBackendsWaitGrowsPastRetryMaxAndItsReturnEndsIt() throws {
        let first = Self.delivery(1)
        var queue = Self.queue([first])
        var now = Self.at(0)
        var longest = 0.0
        for _ in 0..<10 {
            #expect(Self.ids(queue.takeReady(now: now)) == [first.id])
            let failedResult = queue.finished(first.id, .unreachable(Self.unavailable), now: now)
            let failed = try #require(failedResult)
            let next = try #require(failed.nextAttemptAt)
            longest = max(longest, next.timeIntervalSince(now))
            now = next
        }
        #expect(longest > Self.backoff.maximum)
        #expect(longest <= 1800)
        let waits = queue.waitsOnBackend
        #expect(waits)
        let early = queue.takeReady(now: now.addingTimeInterval(-1))
        #expect(early.isEmpty)
        let backend = try #require(first.account?.backend)
        let woken = queue.backendWorks(backend)
        #expect(woken)
        let ready = queue.takeReady(now: now.addingTimeInterval(-1))
        #expect(Self.ids(ready) == [first.id])
        // Failing again after the wake: still the probe's to end, unlike a wait cut short after an error answer.
        queue.finished(first.id, .unreachable(Self.unavailable), now: now)
        let stillWatched = queue.waitsOnBackend
        #expect(stillWatched)
    }

    @Test(arguments: [0.0, 0.001, -1])
    func aRetryAfterOfNothingStillBacksOff(retryAfter: Double) throws {
        var queue = Self.queue([Self.delivery(1)])
        _ = queue.takeReady(now: Self.at(0))
        let failedResult = queue.finished(Self.delivery(1).id, .transient(retryAfter: retryAfter, error: Self.unavailable), now: Self.at(0))
        let failed = try #require(failedResult)
        let next = try #require(failed.nextAttemptAt)
        #expect(next >= Self.at(Self.backoff.initial / 2))
        #expect(queue.takeReady(now: Self.at(0)).isEmpty)
        #expect(failed.lastError == Self.unavailable)
    }

    @Test func repeatedFailuresBackOffFurtherAndSuccessStartsOver() throws {
        let first = Self.delivery(1), second = Self.delivery(2)
        var queue = Self.queue([first, second])
        var now = Self.at(0)
        var delays: [Double] = []
        for _ in 0..<3 {
            #expect(Self.ids(queue.takeReady(now: now)) == [first.id])
            let failedResult = queue.finished(first.id, .transient(retryAfter: nil, error: Self.unavailable), now: now)
            let failed = try #require(failedResult)
            let next = try #require(failed.nextAttemptAt)
            delays.append(next.timeIntervalSince(now))
            now = next
        }
        #expect(delays[0] >= 5 && delays[0] <= 10, "\(delays)")
        #expect(delays[1] >= 10 && delays[1] <= 20, "\(delays)")
        #expect(delays[2] >= 20 && delays[2] <= 40, "\(delays)")
        #expect(queue.delivery(first.id)?.attempts == 3)

        #expect(Self.ids(queue.takeReady(now: now)) == [first.id])
        queue.finished(first.id, .delivered, now: now)
        #expect(Self.ids(queue.takeReady(now: now)) == [second.id])
        let failedResult = queue.finished(second.id, .transient(retryAfter: nil, error: Self.unavailable), now: now)
        let failed = try #require(failedResult)
        let delay = try #require(failed.nextAttemptAt).timeIntervalSince(now)
        #expect(delay >= 5 && delay <= 10, "after a success the backoff starts again, got \(delay)")
    }

    @Test func isWaitingForRetry() throws {
        let first = Self.delivery(1), behind = Self.delivery(2), carol = Self.delivery(3, to: "carol")
        var queue = Self.queue([first, behind, carol])
        #expect(!queue.isWaitingForRetry(first.id, now: Self.at(0)))
        _ = queue.takeReady(now: Self.at(0))
        #expect(!queue.isWaitingForRetry(first.id, now: Self.at(0)), "in flight on its first attempt")

        queue.finished(first.id, .transient(retryAfter: 60, error: Self.unavailable), now: Self.at(0))
        #expect(queue.isWaitingForRetry(first.id, now: Self.at(1)))
        #expect(queue.isWaitingForRetry(behind.id, now: Self.at(1)), "waits behind the retry")
        #expect(!queue.isWaitingForRetry(carol.id, now: Self.at(1)))
        #expect(!queue.isWaitingForRetry("no-such-id", now: Self.at(1)))

        _ = queue.takeReady(now: Self.at(60))
        #expect(!queue.isWaitingForRetry(first.id, now: Self.at(60)), "being tried again")
        queue.finished(first.id, .delivered, now: Self.at(61))
        #expect(!queue.isWaitingForRetry(first.id, now: Self.at(61)))
        #expect(!queue.isWaitingForRetry(behind.id, now: Self.at(61)))
    }

    // MARK: Results

    @Test func deliveredRemovesIt() throws {
        let first = Self.delivery(1)
        var queue = Self.queue([first])
        _ = queue.takeReady(now: Self.at(0))
        let doneResult = queue.finished(first.id, .delivered, now: Self.at(1))
        let done = try #require(doneResult)
        #expect(done.id == first.id)
        #expect(done.state == .delivered)
        #expect(done.attempts == 1)
        #expect(queue.queued.isEmpty)
        #expect(queue.dead.isEmpty)
        #expect(queue.delivery(first.id) == nil)
        #expect(queue.inFlightCount == 0)
        #expect(queue.nextWake(now: Self.at(1)) == nil)
    }

    @Test func aResultForAnUnknownIdChangesNothing() {
        var queue = Self.queue([Self.delivery(1)])
        #expect(queue.finished("0000000099-apns", .delivered, now: Self.at(0)) == nil)
        #expect(queue.queued.count == 1)
    }

    @Test func aRefusalOnTheFirstAttemptIsTheSendersAnswerAndNotKept() throws {
        let first = Self.delivery(1), second = Self.delivery(2)
        var queue = Self.queue([first, second])
        _ = queue.takeReady(now: Self.at(0))
        let failedResult = queue.finished(first.id, .failed(Self.rejected), now: Self.at(1))
        #expect(failedResult?.state == .failed)
        #expect(queue.dead.isEmpty)
        #expect(queue.delivery(first.id) == nil)
        let refusedResult = queue.finished(second.id, .unauthorized(Self.refused), now: Self.at(1))
        #expect(refusedResult?.state == .failed, "refused credentials on the first attempt fail it, nothing is held")
        #expect(!queue.paused)
        #expect(queue.queued.isEmpty)
    }

    @Test func failedAfterWaitingMovesItToDeadWithTheError() throws {
        let first = Self.delivery(1), second = Self.delivery(2)
        var queue = Self.queue([first, second], backoff: Self.quickBackoff)
        _ = queue.takeReady(now: Self.at(0))
        queue.finished(first.id, .transient(retryAfter: 0.5, error: Self.unavailable), now: Self.at(0.5))
        queue.markAnswered([first.id])  // the sender was told "queued"
        #expect(Self.ids(queue.takeReady(now: Self.at(1))) == [first.id])
        let failedResult = queue.finished(first.id, .failed(Self.rejected), now: Self.at(1))
        let failed = try #require(failedResult)
        #expect(failed.state == .failed)
        #expect(failed.lastError == Self.rejected)
        #expect(failed.nextAttemptAt == nil)
        #expect(Self.ids(queue.queued) == [second.id])
        #expect(Self.ids(queue.dead) == [first.id])
        // Kept without its text, which its record on disk has; listed as it was otherwise.
        let kept = try #require(queue.delivery(first.id))
        #expect(kept.message.isEmpty)
        var listed = failed.status
        listed.preview = ""
        #expect(kept.status == listed)
        #expect(queue.stillHolds(failed))
        #expect(failed.status.state == .failed)
        #expect(failed.status.error == Self.rejected)
        // A refusal for good does not hold back the next message.
        #expect(Self.ids(queue.takeReady(now: Self.at(1))) == [second.id])
    }

    @Test func unauthorizedPausesEverythingUntilResumed() throws {
        let bob = Self.delivery(1, to: "bob", expiresAfter: 1000)
        let carol = Self.delivery(2, to: "carol", expiresAfter: 1000)
        var queue = Self.queue([bob, carol], backoff: Self.quickBackoff)
        #expect(Self.ids(queue.takeReady(now: Self.at(0))) == [bob.id, carol.id])
        // Bob's message has waited once already: refused credentials hold it, not fail it.
        queue.finished(bob.id, .transient(retryAfter: 0.5, error: Self.unavailable), now: Self.at(0.5))
        queue.markAnswered([bob.id])  // the sender was told "queued"
        #expect(Self.ids(queue.takeReady(now: Self.at(1))) == [bob.id])

        let heldResult = queue.finished(bob.id, .unauthorized(Self.refused), now: Self.at(1))

        let held = try #require(heldResult)
        #expect(queue.paused)
        #expect(held.state == .queued)
        #expect(held.lastError == Self.refused)
        #expect(held.nextAttemptAt == nil)
        queue.finished(carol.id, .transient(retryAfter: 30, error: Self.unavailable), now: Self.at(1))

        let dave = Self.delivery(3, to: "dave", expiresAfter: 2000)
        queue.add(dave)
        #expect(queue.takeReady(now: Self.at(2)).isEmpty)
        #expect(queue.takeReady(now: Self.at(100)).isEmpty)
        #expect(queue.isWaitingForRetry(dave.id, now: Self.at(2)))
        #expect(queue.isWaitingForRetry(bob.id, now: Self.at(2)))
        // Only expiry can wake a paused queue; carol's retry at 31 s does not count.
        #expect(queue.nextWake(now: Self.at(2)) == Self.at(1000))

        queue.resume()
        #expect(!queue.paused)
        #expect(queue.nextWake(now: Self.at(2)) == Self.at(31))
        #expect(Self.ids(queue.takeReady(now: Self.at(2))) == [bob.id, dave.id])
        #expect(Self.ids(queue.takeReady(now: Self.at(31))) == [carol.id])
    }

    @Test func aMessageAnsweredQueuedIsKeptWhenItsFirstAttemptIsRefused() throws {
        // Waiting behind a retry to the same recipient: the sender hears "queued" before
        // the message is ever tried.
        let first = Self.delivery(1), second = Self.delivery(2)
        var queue = Self.queue([first, second])
        _ = queue.takeReady(now: Self.at(0))
        queue.finished(first.id, .transient(retryAfter: 0.5, error: Self.unavailable), now: Self.at(0))
        #expect(queue.isWaitingForRetry(second.id, now: Self.at(0)))
        queue.markAnswered([second.id])
        _ = queue.takeReady(now: Self.at(1))
        queue.finished(first.id, .delivered, now: Self.at(1))
        #expect(Self.ids(queue.takeReady(now: Self.at(1))) == [second.id])
        let result = queue.finished(second.id, .failed(Self.rejected), now: Self.at(1))
        let refused = try #require(result)
        #expect(refused.attempts == 1)
        #expect(queue.dead.map(\.id) == [second.id], "listed until purged: its sender was told it is queued")
        #expect(queue.delivery(second.id)?.status.state == .failed)
    }

    @Test func anotherAccountsMessagesAreHeldNotSentAndGoOutWhenItReturns() {
        let bob = AccountKey(user: "bob", backend: Self.alice.backend)
        let fromAlice = Self.delivery(1, to: "carol")
        let fromBob = Self.delivery(2, to: "carol", account: bob)
        var queue = Self.queue([fromAlice])
        _ = queue.takeReady(now: Self.at(0))
        queue.finished(fromAlice.id, .transient(retryAfter: 30, error: Self.unavailable), now: Self.at(0))
        queue.add(fromBob)
        queue.setAccount(bob)
        #expect(queue.isHeld(fromAlice))
        #expect(!queue.isHeld(fromBob))
        #expect(Self.ids(queue.takeReady(now: Self.at(0))) == [fromBob.id], "alice's message is neither sent nor in bob's way")
        queue.finished(fromBob.id, .delivered, now: Self.at(0))
        #expect(queue.takeReady(now: Self.at(1)).isEmpty)
        #expect(queue.nextWake(now: Self.at(1)) == fromAlice.expiresAt, "only its expiry, never a retry, wakes a held message")

        queue.setAccount(Self.alice)
        #expect(queue.nextWake(now: Self.at(1)) == Self.at(30))
        #expect(Self.ids(queue.takeReady(now: Self.at(30))) == [fromAlice.id])
    }

    @Test func purgeDropsMessagesHeldForAnAccountThatIsGone() {
        let fromAlice = Self.delivery(1)
        var queue = Self.queue([fromAlice])
        queue.setAccount(nil)
        #expect(queue.isHeld(fromAlice))
        #expect(queue.purgeDead() == [fromAlice.id])
        #expect(queue.queued.isEmpty)
    }
}
