#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// What expires: queued deliveries past `outbox_expiry`, in both parts of the queue, moved to
/// `dead` (kept to be reported, never dropped silently), and what the outbox needs to write
/// them as expired.
extension OutboxQueue {
    /// Moves queued deliveries past their expiry (and not in flight) to `dead`, and returns
    /// them as `dead` keeps them.
    public mutating func expire(now: Date) -> [Delivery] {
        expireKeepingPlaces(now: now).ids.compactMap { id in dead.position(of: id).map { dead[$0] } }
    }

    /// What `expire` moved to `dead`, for the outbox to write and report: the active part's
    /// deliveries whole, and the deferred part's ids. 100,000 messages may expire at once
    /// after a week offline: each of the deferred part's is 16 bytes here.
    public struct Expired: Sendable {
        public var active: [Delivery] = []
        public var deferred: [DeferredExpiry] = []

        public var isEmpty: Bool { active.isEmpty && deferred.isEmpty }
        public var count: Int { active.count + deferred.count }
        public var ids: [String] { active.map(\.id) + deferred.map(\.id) }
    }

    /// A deferred delivery that expired: the rest of it is in `dead`.
    public struct DeferredExpiry: Sendable {
        public var sequence: Int
        public var platform: Platform?
        public var senderWaiting: Bool

        public var id: String { Delivery.id(sequence: sequence, platform: platform) }
    }

    /// Why an expired delivery was not sent.
    static let expiryError = WireError(code: .timeout, message: "not delivered before it expired")

    /// `expire`, telling the outbox what it must write (`Expired`): the active part's
    /// deliveries whole, the deferred part's by id (their records stay where they are).
    public mutating func expireKeepingPlaces(now: Date) -> Expired {
        var expired = Expired()
        var emptied = Set<String>()
        if let floor = deferred.expiryFloor, floor <= now {
            let positions = deferred.expired(now: now)
            expired.deferred.reserveCapacity(positions.count)
            for position in positions {
                let key = deferred.orderKey(at: position)
                freed.insert(key)
                emptied.insert(key)
                let entry = deferred.entries[position]
                expired.deferred.append(DeferredExpiry(sequence: entry.sequence, platform: deferred.keys[Int(entry.key)].platform,
                                                       senderWaiting: entry.senderWaiting))
            }
            // Made one at a time as `dead` takes them: never all of them whole at once. Each
            // record stays where it is, queued: `OutboxExpiryMark` says it expired.
            dead.append(contentsOf: positions.lazy.map { [deferred] position in
                var delivery = deferred.delivery(at: position)
                delivery.state = .expired
                delivery.lastError = Self.expiryError
                return (delivery, deferred.stored(at: position))
            })
            for position in positions { deferred.remove(at: position) }
            deferred.tidy()
        }
        expired.active = expireActive(now: now)
        if !expired.active.isEmpty && !deferred.isEmpty { freed.formUnion(expired.active.map(\.orderKey)) }
        dead.append(contentsOf: expired.active)
        emptied.formUnion(expired.active.map(\.orderKey))
        forgetWaitsOfEmptiedKeys(emptied)
        return expired
    }

    /// A key whose last message expired owes nothing any more: as after a refusal, its
    /// next message is tried at once, not behind the backoff of the one given up.
    private mutating func forgetWaitsOfEmptiedKeys(_ keys: Set<String>) {
        for key in keys where queued.count(of: key) == 0 && deferred.count(of: key) == 0 {
            failures[key] = nil
            retryAt[key] = nil
            endRecoverableWait(key)
        }
    }

    private mutating func expireActive(now: Date) -> [Delivery] {
        guard let floor = expiryFloor, floor <= now else { return [] }
        var expired: [Delivery] = []
        var earliest: Date?
        queued.removeAll { delivery, inFlight in
            if inFlight { return false }
            guard delivery.expiresAt <= now else {
                if earliest.map({ delivery.expiresAt < $0 }) ?? true { earliest = delivery.expiresAt }
                return false
            }
            var gone = delivery
            gone.state = .expired
            gone.nextAttemptAt = nil
            if gone.lastError == nil {
                gone.lastError = Self.expiryError
            }
            expired.append(gone)
            return true
        }
        expiryFloor = earliest
        return expired
    }
}
