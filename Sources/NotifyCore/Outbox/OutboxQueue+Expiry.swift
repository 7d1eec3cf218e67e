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

    /// What `expire` moved to `dead`, for the outbox to write and report: those held whole
    /// (tried in the active part), to be written with their attempts and last error; the
    /// others by where their records are (`inPlace`). Of those, one never tried keeps its
    /// record as it was queued (`OutboxExpiryMark` says it expired); one tried that waited
    /// in the deferred part without its text has its record read back and written whole.
    /// 100,000 messages may expire at once after a week offline: each is 24 bytes here.
    public struct Expired: Sendable {
        public var whole: [Delivery] = []
        public var inPlace: [ExpiryInPlace] = []
        /// The deliveries in flight past their expiry, never tried, and those back from their
        /// first attempt whose outcome is not written yet: not expired, and their records say
        /// queued and never tried as the untried ones' do. The mark that records `inPlace`
        /// leaves them out.
        public var beingTried: Set<Int> = []

        public var isEmpty: Bool { whole.isEmpty && inPlace.isEmpty }
        public var count: Int { whole.count + inPlace.count }
        public var ids: [String] { whole.map(\.id) + inPlace.map(\.id) }
    }

    /// A delivery that expired, and where its record is: the rest of it is in `dead`.
    public struct ExpiryInPlace: Sendable {
        public var sequence: Int
        public var platform: Platform?
        public var stored: StoredEntry
        public var senderWaiting: Bool
        /// Its record says it was tried: the mark cannot cover it.
        public var tried = false

        public var id: String { Delivery.id(sequence: sequence, platform: platform) }
    }

    /// Why an expired delivery was not sent.
    static let expiryError = WireError(code: .timeout, message: "not delivered before it expired")

    /// `expire`, telling the outbox what it must write (`Expired`). A deferred delivery, and
    /// an active one never tried whose record's place is known (`untriedPlaces`), are kept
    /// in `dead` with where their records are. Any other is written whole. One whose last
    /// outcome is `beingWritten` expires at a pass after that write: written before it,
    /// the expiry would be overwritten by the outcome, a record still queued.
    public mutating func expireKeepingPlaces(now: Date, beingWritten: Set<String> = []) -> Expired {
        var expired = Expired()
        var emptied = Set<String>()
        if let floor = deferred.expiryFloor, floor <= now {
            let positions = deferred.expired(now: now)
            expired.inPlace.reserveCapacity(positions.count)
            for position in positions {
                let key = deferred.orderKey(at: position)
                freed.insert(key)
                emptied.insert(key)
                let entry = deferred.entries[position]
                expired.inPlace.append(ExpiryInPlace(sequence: entry.sequence, platform: deferred.keys[Int(entry.key)].platform,
                                                     stored: deferred.stored(at: position), senderWaiting: entry.senderWaiting, tried: entry.tried))
            }
            // Made one at a time as `dead` takes them: never all of them whole at once.
            dead.append(contentsOf: positions.lazy.map { [deferred] position in
                var delivery = deferred.delivery(at: position)
                delivery.markExpired()
                return (delivery, deferred.stored(at: position))
            })
            for position in positions { deferred.remove(at: position) }
            deferred.tidy()
        }
        let (whole, placed, awaitingOutcome) = expireActive(now: now, beingWritten: beingWritten)
        let keys = whole.map(\.orderKey) + placed.map(\.delivery.orderKey)
        if !keys.isEmpty && !deferred.isEmpty { freed.formUnion(keys) }
        emptied.formUnion(keys)
        expired.whole = whole
        expired.inPlace += placed.map {
            ExpiryInPlace(sequence: $0.delivery.sequence, platform: $0.delivery.platform, stored: $0.stored, senderWaiting: $0.delivery.senderWaiting)
        }
        dead.append(contentsOf: whole)
        dead.append(contentsOf: placed.lazy.map { ($0.delivery, $0.stored) })
        forgetWaitsOfEmptiedKeys(emptied)
        if !expired.inPlace.isEmpty {
            // Also those back from an attempt whose outcome is not on disk yet: their records
            // still say never tried.
            expired.beingTried = queued.inFlightSequences { $0.neverTried && $0.expiresAt <= now }.union(awaitingOutcome)
        }
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

    /// The active part's deliveries past their expiry: whole, or with where their records
    /// are when they were never tried and that is known; and the sequences of those left
    /// past their expiry for their outcome being written.
    private mutating func expireActive(now: Date, beingWritten: Set<String>)
        -> (whole: [Delivery], placed: [(delivery: Delivery, stored: StoredEntry)], awaitingOutcome: Set<Int>) {
        guard let floor = expiryFloor, floor <= now else { return ([], [], []) }
        var expired: [Delivery] = []
        var placed: [(delivery: Delivery, stored: StoredEntry)] = []
        var places = untriedPlaces
        untriedPlaces = [:]
        var earliest: Date?
        var awaitingOutcome = Set<Int>()
        queued.removeAll { delivery, inFlight in
            if inFlight { return false }
            let awaiting = !beingWritten.isEmpty && beingWritten.contains(delivery.id)
            guard delivery.expiresAt <= now, !awaiting else {
                if awaiting && delivery.expiresAt <= now { awaitingOutcome.insert(delivery.sequence) }
                if earliest.map({ delivery.expiresAt < $0 }) ?? true { earliest = delivery.expiresAt }
                return false
            }
            var gone = delivery
            let untried = gone.neverTried
            gone.markExpired()
            if let stored = places.removeValue(forKey: gone.id), untried {
                placed.append((gone, stored))
            } else {
                expired.append(gone)
            }
            return true
        }
        untriedPlaces = places
        expiryFloor = earliest
        return (expired, placed, awaitingOutcome)
    }
}

extension Delivery {
    /// As an expiry leaves it: expired, without a next attempt, with the error it last had
    /// or, never tried, why it was not sent.
    mutating func markExpired() {
        state = .expired
        nextAttemptAt = nil
        if lastError == nil { lastError = OutboxQueue.expiryError }
    }
}
