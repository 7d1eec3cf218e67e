#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// The senders waiting to hear about their deliveries, found by waiter and by delivery,
/// so that an event about one delivery looks only at the senders waiting for it, and the
/// one timer for their deadlines. The outbox decides when a waiter has its answer; this
/// only keeps track of who waits, and until when.
struct SenderWaiters {
    struct Waiter {
        var ids: [String]
        var untilFinal: Bool
        var continuation: CheckedContinuation<[DeliveryStatus], Never>
        var deadline: ContinuousClock.Instant
    }

    private(set) var all: [UInt64: Waiter] = [:]
    private var byDelivery: [String: [UInt64]] = [:]
    private var nextID: UInt64 = 0
    /// One timer for all waiters, set for the earliest deadline (`Outbox.armDeadlineTimer`).
    var timer = DeadlineTimer()

    mutating func add(_ waiter: Waiter) {
        let id = nextID
        nextID += 1
        all[id] = waiter
        for delivery in waiter.ids { byDelivery[delivery, default: []].append(id) }
    }

    /// The waiters of any of `deliveries`, or every waiter when nil.
    func waiting(on deliveries: [String]?) -> [UInt64: Waiter] {
        guard let deliveries else { return all }
        var chosen: [UInt64: Waiter] = [:]
        for delivery in deliveries {
            for id in byDelivery[delivery] ?? [] { chosen[id] = all[id] }
        }
        return chosen
    }

    mutating func remove(_ id: UInt64) {
        guard let waiter = all.removeValue(forKey: id) else { return }
        for delivery in waiter.ids {
            byDelivery[delivery]?.removeAll { $0 == id }
            if byDelivery[delivery]?.isEmpty == true { byDelivery[delivery] = nil }
        }
        all.releaseStorageIfEmpty()
        byDelivery.releaseStorageIfEmpty()
    }

    /// The earliest deadline of those waiting.
    var earliestDeadline: ContinuousClock.Instant? {
        all.values.map(\.deadline).min()
    }

    /// The timer fired: it is forgotten, and the waiters whose deadline passed by `now`
    /// are returned (still here until the caller removes them as it answers them).
    mutating func timerFired(at deadline: ContinuousClock.Instant, now: ContinuousClock.Instant) -> [UInt64: Waiter] {
        timer.fired(at: deadline)
        return all.filter { $0.value.deadline <= now }
    }
}
