#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// The deferred part of the queue (`deferred`): the deliveries whose turn is not near,
/// kept as index entries with their records on disk, and how they move up into the active
/// part at their turn.
extension OutboxQueue {
    /// The bounds of the active part (for tests; the defaults otherwise).
    public mutating func setActiveLimits(_ total: Int, perKey: Int) {
        activeLimit = max(1, total)
        keyLimit = max(1, perKey)
    }

    /// Room for `count` index entries in one allocation, made before a start adds them:
    /// grown by doubling instead, each step left a hole in the heap.
    public mutating func reserveDeferred(_ count: Int) {
        deferred.reserveCapacity(count)
    }

    /// Adds a delivery read from disk without its message: an index entry, moved up at its
    /// turn (`takePromotions`). One that cannot be an index entry must come whole (`add`).
    public mutating func addDeferred(_ delivery: Delivery, stored: StoredEntry, bytes: Int) {
        guard delivery.state == .queued, DeferredDeliveries.fits(delivery) else { return add(delivery) }
        deferEntry(delivery, stored: stored, bytes: bytes)
    }

    /// True when a delivery of this key would now be deferred, not active.
    public func wouldDefer(_ delivery: Delivery) -> Bool {
        let key = delivery.orderKey
        if !deferred.isEmpty && deferred.count(of: key) > 0 { return true }
        return queued.count >= activeLimit && queued.count(of: key) >= keyLimit
    }

    mutating func deferEntry(_ delivery: Delivery, stored: StoredEntry, bytes: Int) {
        deferred.append(delivery, stored: stored, bytes: bytes)
        if queued.count(of: delivery.orderKey) < keyLimit { freed.insert(delivery.orderKey) }
    }

    /// The deferred deliveries whose turn has come, taken out of `deferred`, in order, each
    /// without its message and with where its record is: the caller reads each record and
    /// gives it back (`promoted`), or says it could not (`unreadable`). In order of arrival
    /// while the active part has room; beyond it, the first of each key with fewer than
    /// `keyLimit` active.
    public mutating func takePromotions() -> [(delivery: Delivery, stored: StoredEntry)] {
        guard !deferred.isEmpty else {
            freed = []
            return []
        }
        var taken: [(delivery: Delivery, stored: StoredEntry)] = []
        var active = queued.count
        var perKey: [String: Int] = [:]
        func take(_ position: Int) {
            let key = deferred.orderKey(at: position)
            taken.append((deferred.delivery(at: position), deferred.stored(at: position)))
            deferred.remove(at: position)
            active += 1
            perKey[key, default: queued.count(of: key)] += 1
        }
        while active < activeLimit, let position = deferred.firstPosition {
            take(position)
        }
        let keys = freed
        freed = []
        for key in keys {
            while perKey[key] ?? queued.count(of: key) < keyLimit, let position = deferred.firstPosition(of: key) {
                take(position)
            }
        }
        deferred.tidy()
        return taken
    }

    /// A deferred delivery read back whole from `stored`: it joins the active part.
    public mutating func promoted(_ delivery: Delivery, stored: StoredEntry) {
        addActive(delivery, stored: stored)
    }

    /// A deferred delivery whose record could not be read: kept as failed, to be reported.
    public mutating func unreadable(_ delivery: Delivery, reason: String) {
        var failed = delivery
        failed.state = .failed
        failed.lastError = WireError(code: .internalError, message: "not sent: \(reason)")
        dead.append(failed)
    }

    /// Where `id` is in `deferred`.
    func deferredPosition(of id: String) -> Int? {
        guard !deferred.isEmpty, let sequence = Delivery.sequence(inID: id) else { return nil }
        return deferred.positions(of: sequence).first { deferred.delivery(at: $0).id == id }
    }

    /// Held or waiting deliveries of `deferred`, counted per key: (held, waiting).
    func deferredCounts() -> (held: Int, waiting: Int) {
        var held = 0
        var waiting = 0
        for key in deferred.perKey {
            if paused || key.account == nil || key.account != account { held += key.count } else { waiting += key.count }
        }
        return (held, waiting)
    }
}
