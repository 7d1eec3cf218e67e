#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// The senders waiting to hear about their deliveries, found by waiter and by delivery,
/// so that an event about one delivery looks only at the senders waiting for it. The
/// outbox decides when a waiter has its answer; this only keeps track of who waits.
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
}
