#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What `status` says of the outbox: how many messages wait, how many are held, how many
/// failed, and when the next attempt is due.
public struct OutboxCounts: Equatable, Sendable {
    public var waiting = 0
    public var held = 0
    public var failed = 0
    public var nextAttemptAt: Date?
    /// The bytes of the waiting and held messages' text.
    public var bytes = 0
}

extension OutboxQueue {
    /// The counts, from the tallies both parts keep per account: as cheap with 100,000
    /// messages queued as with one, so the outbox can publish them with every change.
    public var counts: OutboxCounts {
        // Only the account logged in now sends, and nothing does while paused.
        let sending = paused ? nil : account
        let active = sending.map { queued.tallies.count(of: $0) } ?? 0
        let deferredSending = sending.map { deferred.tallies.count(of: $0) } ?? 0
        return OutboxCounts(waiting: active + deferredSending, held: queued.count - active + deferred.count - deferredSending,
                            failed: dead.count, nextAttemptAt: sending.flatMap { queued.tallies.nextAttempt(of: $0) }, bytes: queuedBytes)
    }

    /// The same counts, found by looking at every delivery: what the tallies must agree
    /// with (checked by the tests' daemons and the tallies' own tests).
    public var countsByLooking: OutboxCounts {
        var counts = OutboxCounts(failed: dead.count, bytes: queuedBytes)
        for delivery in queued {
            if paused || isHeld(delivery) {
                counts.held += 1
            } else {
                counts.waiting += 1
                if let at = delivery.nextAttemptAt, counts.nextAttemptAt.map({ at < $0 }) ?? true { counts.nextAttemptAt = at }
            }
        }
        let deferred = deferredCounts()
        counts.waiting += deferred.waiting
        counts.held += deferred.held
        return counts
    }
}
