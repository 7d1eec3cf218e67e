#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol
import NotifySystem

/// The outbox's scheduling as a pure value: which deliveries may go out now, and what a
/// result means for the rest. Deliveries to the same recipient and platform go out one at
/// a time in arrival order (a retry holds back the ones behind it); others go side by side,
/// up to `concurrency` at once.
///
/// A refusal while the sender still waits for its answer (bad credentials, another 4xx) is
/// that answer: the delivery fails and is not kept. Once the sender was told "queued", a
/// refusal is kept in `dead` to be reported, and refused credentials hold everything
/// until the next login instead of failing messages that were already accepted.
///
/// Only the deliveries of the account logged in now go out; the others are held (never
/// sent in another account's name) until their account logs in again or they are purged.
public struct OutboxQueue: Sendable {
    // What is not private here is shared with OutboxQueue+EarlyEnds.swift (what ends a
    // wait before its time), OutboxQueue+Commands.swift (what `outbox` commands change),
    // OutboxQueue+Deferred.swift (the part of the queue kept as index entries) and
    // OutboxQueue+Expiry.swift (what expires, into `dead`).
    /// The active part: every key's first deliveries, whole, the ones that go out next.
    public internal(set) var queued = QueuedDeliveries()
    /// The rest, as index entries, their records on disk: queued behind the active part of
    /// their key (`DeferredDeliveries`). Empty unless the outbox holds more than `activeLimit`.
    public internal(set) var deferred = DeferredDeliveries()
    /// The active part takes deliveries in order while it holds fewer than this, and beyond
    /// it, each key's first `keyLimit`: a key whose messages wait for a retry cannot keep
    /// the others' out. Kept whole in memory, its messages' text with them.
    public internal(set) var activeLimit = 1024
    public internal(set) var keyLimit = 32
    /// Keys whose active deliveries left since the last `takePromotions`: their next
    /// deferred ones may move up.
    var freed: Set<String> = []
    /// Failed or expired after queueing: kept to be reported, never dropped silently; as
    /// entries without their text, which their records on disk keep (`DeadDeliveries`).
    public internal(set) var dead = DeadDeliveries()
    /// Where the records are of active deliveries not tried yet, as found when they moved
    /// up or were written: one that expires before its first attempt is then kept in
    /// `dead` with its record's place, and not written again (`OutboxExpiryMark`). An
    /// attempt, or leaving the active part, forgets it.
    var untriedPlaces: [String: StoredEntry] = [:]
    public internal(set) var backoff: Backoff
    public internal(set) var concurrency: Int
    /// Set while the backend refuses the credentials: nothing goes out until `resume`.
    public internal(set) var paused = false
    /// What the backend said when it refused them: why every delivery is held meanwhile.
    public internal(set) var pauseReason: WireError?
    /// The account logged in now; deliveries of any other are held.
    public private(set) var account: AccountKey?

    /// False once a delivery whose id does not begin with its sequence number was added
    /// (a hand-edited entry): lookups by id then scan instead of searching.
    private var idsFollowSequence = true
    /// At most the earliest expiry of a queued delivery not in flight (nil: none is
    /// queued): while it lies ahead, nothing can expire and `expire` need not look.
    var expiryFloor: Date?
    var retryAt: [String: Wait] = [:]
    var failures: [String: Int] = [:]
    /// Keys waiting out their own backoff after a failure without `Retry-After`, with their
    /// backend: an answer from that backend to another request ends the wait (`backendWorks`).
    var recoverable: [String: String] = [:]
    /// Keys whose wait a recovery ended: if they fail again at once, they wait their backoff
    /// out, so a recipient whose own messages fail is not retried at every other success.
    var cutShort: Set<String> = []
    /// Keys whose last attempt found no route to their backend: since when, and whether
    /// they wait for the network now (their retry may be under way).
    var offline: [String: OfflineWait] = [:]
    /// Per key whose lane runs: the deliveries it took past one that waited for a place
    /// (see `takeReady`); forgotten once the key has none in flight.
    var turnsTaken: [String: Int] = [:]

    struct OfflineWait {
        var backend: String
        var since: Date
        var waiting: Bool
    }
    private var random: SplitMix64

    /// A key's wait after a failure, and how it was drawn, so that a shorter backoff can
    /// shorten it (`changeSettings`).
    struct Wait {
        var until: Date
        var failedAt: Date
        var retryAfter: Double?
        /// The backoff's draw of jitter, or nil for a wait for the network, which the
        /// longest backoff bounds.
        var unit: Double?
        /// Watched by the reachability probe: its backoff may grow past `retry_max`.
        var watched = false
    }

    public init(backoff: Backoff, concurrency: Int, seed: UInt64 = 0x6F75_7462_6F78) {
        self.backoff = backoff
        self.concurrency = max(1, concurrency)
        self.random = SplitMix64(seed: seed)
    }

    public var inFlightCount: Int { queued.inFlightCount }

    /// Deliveries queued, in both parts.
    public var queuedCount: Int { queued.count + deferred.count }

    /// The bytes of their messages' text, in both parts (`outbox_max_bytes`).
    public var queuedBytes: Int { queued.bytes + deferred.bytes }

    /// Adds a delivery, whole. With `stored`, where its record is on disk, it may be kept as
    /// an index entry (`deferred`) when the active part has no room for it, and is whenever
    /// its key has deferred deliveries already, which it must not overtake.
    public mutating func add(_ delivery: Delivery, stored: StoredEntry? = nil) {
        guard delivery.state == .queued else {
            dead.append(delivery, stored: stored ?? .inOwnFile)
            return
        }
        if let stored, wouldDefer(delivery), DeferredDeliveries.fits(delivery) {
            deferEntry(delivery, stored: stored, bytes: delivery.message.utf8.count)
            return
        }
        addActive(delivery, stored: stored)
    }

    /// Room for `count` failed or expired deliveries in one allocation, made before a
    /// start adds them (as `reserveDeferred` for the queued ones).
    public mutating func reserveDead(_ count: Int) {
        dead.reserveCapacity(count)
    }

    /// The record of `id`, queued in the active part before it was written, is at `stored`
    /// now: kept while it is not tried (`untriedPlaces`).
    mutating func noteWritten(_ id: String, at stored: StoredEntry) {
        guard let index = queuedIndex(of: id), queued[index].neverTried else { return }
        untriedPlaces[id] = stored
    }

    /// Adds `delivery` to the active part; `stored`, where its record is, if known.
    mutating func addActive(_ delivery: Delivery, stored: StoredEntry? = nil) {
        if let stored, delivery.neverTried { untriedPlaces[delivery.id] = stored }
        if Delivery.sequence(inID: delivery.id) != delivery.sequence { idsFollowSequence = false }
        queued.insert(delivery, at: firstQueuedIndex(atOrAfter: delivery.sequence + 1))
        lowerExpiryFloor(to: delivery.expiresAt)
    }

    public func delivery(_ id: String) -> Delivery? {
        queuedIndex(of: id).map { queued[$0] } ?? deferredPosition(of: id).map(deferred.delivery) ?? dead.position(of: id).map { dead[$0] }
    }

    /// Where `id` is in `queued`. Every waiting sender asks after its deliveries on each
    /// pass of the outbox, so this is a binary search on the sequence number the id
    /// begins with (`queued` is sorted by it), not a scan.
    func queuedIndex(of id: String) -> Int? {
        // The delivery answered last, or the next to be: a burst is sent and answered from the front.
        if let first = queued.first, first.id == id { return 0 }
        guard idsFollowSequence, let sequence = Delivery.sequence(inID: id) else {
            return queued.firstIndex { $0.id == id }
        }
        // Copies of one message share no sequence number today, but an entry from disk may.
        var index = firstQueuedIndex(atOrAfter: sequence)
        while index < queued.endIndex && queued[index].sequence == sequence {
            if queued[index].id == id { return index }
            index += 1
        }
        return nil
    }

    private func firstQueuedIndex(atOrAfter sequence: Int) -> Int {
        var low = queued.startIndex
        var high = queued.endIndex
        while low < high {
            let middle = (low + high) / 2
            if queued[middle].sequence < sequence { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// True for a queued delivery whose account is not the one logged in.
    public func isHeld(_ delivery: Delivery) -> Bool {
        Self.isHeld(delivery, account: account)
    }

    static func isHeld(_ delivery: Delivery, account: AccountKey?) -> Bool {
        delivery.state == .queued && (delivery.account == nil || delivery.account != account)
    }

    /// Another login (or a logout): its deliveries go out, the others are held.
    public mutating func setAccount(_ account: AccountKey?) {
        self.account = account
    }

    /// The senders of `ids` have their answer: a later refusal keeps the delivery listed.
    public mutating func markAnswered(_ ids: [String]) {
        for id in ids {
            guard let index = queuedIndex(of: id) else {
                if let position = deferredPosition(of: id) { deferred.markAnswered(at: position) }
                continue
            }
            guard queued[index].senderWaiting else { continue }
            queued[index].senderWaiting = false
        }
    }

    /// True when `id` waits behind a retry: its sender can be told it is queued.
    public func isWaitingForRetry(_ id: String, now: Date) -> Bool {
        // Deferred: it waits behind the first messages of its key.
        guard let index = queuedIndex(of: id) else { return deferredPosition(of: id) != nil }
        let delivery = queued[index]
        // Past its expiry and back (its outcome being written held it back): it expires
        // next, not retries. One still in flight is answered as before its expiry.
        if delivery.expiresAt <= now && !queued.isInFlight(at: index) { return false }
        if paused || isHeld(delivery) { return true }
        if let until = retryAt[delivery.orderKey]?.until, until > now { return true }
        return delivery.attempts > 0 && !queued.isInFlight(at: index)
    }

    private mutating func lowerExpiryFloor(to date: Date) {
        if expiryFloor.map({ date < $0 }) ?? true { expiryFloor = date }
    }

    /// Records an attempt's result; returns the delivery as it now stands.
    @discardableResult
    public mutating func finished(_ id: String, _ result: DeliveryResult, now: Date) -> Delivery? {
        guard let index = queuedIndex(of: id) else { return nil }
        queued.setInFlight(false, at: index)
        // Tried, or about to be written again: its record's place may change.
        if !untriedPlaces.isEmpty { untriedPlaces[id] = nil }
        // Back in the queue's count of what may expire, unless it leaves it below.
        lowerExpiryFloor(to: queued[index].expiresAt)
        var delivery = queued[index]
        if case .accountGone = result { return delivery }
        if case .notAttempted = result { return delivery }
        delivery.attempts += 1
        let key = delivery.orderKey
        switch result {
        case .accountGone, .notAttempted:
            return delivery
        case .delivered:
            queued.remove(at: index)
            if !deferred.isEmpty { freed.insert(key) }
            delivery.state = .delivered
            delivery.lastError = nil
            delivery.nextAttemptAt = nil
            // Looked up only when there is anything to find: a burst that goes well has none.
            if !failures.isEmpty { failures[key] = nil }
            if !retryAt.isEmpty { retryAt[key] = nil }
            endRecoverableWait(key)
            return delivery
        case .offline(let error):
            // Not the backend's failure: its backoff does not grow. The network's next change
            // ends the wait; should none be seen, the longest backoff does.
            recoverable[key] = nil
            cutShort.remove(key)
            offline[key] = OfflineWait(backend: delivery.account?.backend ?? "", since: offline[key]?.since ?? now, waiting: true)
            let next = now.addingTimeInterval(backoff.ceiling)
            retryAt[key] = Wait(until: next, failedAt: now, retryAfter: nil, unit: nil)
            delivery.nextAttemptAt = next
            delivery.lastError = error
        case .transient(let retryAfter, let error):
            backOff(&delivery, retryAfter: retryAfter, error: error, watched: false, now: now)
        case .unreachable(let error):
            backOff(&delivery, retryAfter: nil, error: error, watched: true, now: now)
        case .unauthorized(let error) where !delivery.senderWaiting:
            offline[key] = nil
            paused = true
            pauseReason = error
            delivery.nextAttemptAt = nil
            delivery.lastError = error
        case .unauthorized(let error), .failed(let error):
            // Refused for good: the next message to this recipient need not wait.
            failures[key] = nil
            retryAt[key] = nil
            endRecoverableWait(key)
            queued.remove(at: index)
            if !deferred.isEmpty { freed.insert(key) }
            delivery.state = .failed
            delivery.lastError = error
            delivery.nextAttemptAt = nil
            if !delivery.senderWaiting { dead.append(delivery) }
            return delivery
        }
        queued[index] = delivery
        return delivery
    }

    /// A failure worth retrying: the backoff grows. `watched`: the backend could not be
    /// reached, and the reachability probe ends the wait when it is back, so the wait may
    /// grow past `retry_max` (`Backoff.ceiling`).
    private mutating func backOff(_ delivery: inout Delivery, retryAfter: Double?, error: WireError, watched: Bool, now: Date) {
        let key = delivery.orderKey
        offline[key] = nil
        let count = (failures[key] ?? 0) + 1
        failures[key] = count
        let wasCutShort = cutShort.remove(key) != nil
        // A watched wait stays one the probe ends, however often: the probe, not another
        // recipient's success, wakes it, and only once the backend connects.
        recoverable[key] = retryAfter == nil && (watched || !wasCutShort) ? delivery.account?.backend : nil
        let unit = random.nextUnit()
        let next = now.addingTimeInterval(backoff.delay(failures: count, retryAfter: retryAfter, unit: unit, watched: watched))
        retryAt[key] = Wait(until: next, failedAt: now, retryAfter: retryAfter, unit: unit, watched: watched)
        delivery.nextAttemptAt = next
        delivery.lastError = error
        delivery.lastError?.message = backoff.noted(error.message, retryAfter: retryAfter)
    }

    mutating func endRecoverableWait(_ key: String) {
        if !recoverable.isEmpty { recoverable[key] = nil }
        if !cutShort.isEmpty { cutShort.remove(key) }
        if !offline.isEmpty { offline[key] = nil }
    }

    /// Credentials changed: try again.
    public mutating func resume() {
        paused = false
        pauseReason = nil
    }

    /// Whether the queue still holds `delivery` as it was: not cancelled, purged or changed
    /// since. Compared as listed, but for the first words: `dead` keeps no text.
    public func stillHolds(_ delivery: Delivery) -> Bool {
        guard var now = self.delivery(delivery.id)?.status else { return false }
        var then = delivery.status
        now.preview = nil
        then.preview = nil
        return now == then
    }

    public func isInFlight(_ id: String) -> Bool { queuedIndex(of: id).map(queued.isInFlight) ?? false }

    /// Lets the tables sized for a burst go once the burst is over (see `EmptyStorage`).
    mutating func releaseStorageIfEmpty() {
        queued.releaseStorageIfEmpty()
        if queued.isEmpty { untriedPlaces = [:] }
        retryAt.releaseStorageIfEmpty()
        failures.releaseStorageIfEmpty()
        recoverable.releaseStorageIfEmpty()
        cutShort.releaseStorageIfEmpty()
        offline.releaseStorageIfEmpty()
    }

    /// When something next becomes possible: a retry time or an expiry. Not the expiry of
    /// one in flight or whose outcome is `beingWritten`: the pass after its answer, or after
    /// that write, expires it.
    public func nextWake(now: Date, beingWritten: Set<String> = []) -> Date? {
        // One pass over the queue: this runs after every attempt and every commit.
        var earliest: Date? = deferred.expiryFloor
        let pending = paused ? [:] : retryAt.compactMapValues { $0.until > now ? $0.until : nil }
        // By position, not by copying each delivery out of the queue.
        for index in queued.indices {
            // An expiry that passed while the delivery was in flight is handled when it returns.
            let expiresAt = queued[index].expiresAt
            if earliest.map({ expiresAt < $0 }) ?? true, !queued.isInFlight(at: index),
               beingWritten.isEmpty || !beingWritten.contains(queued[index].id) {
                earliest = expiresAt
            }
            // Held deliveries only expire: a login, not a retry time, lets them go out.
            if !pending.isEmpty, !isHeld(queued[index]), let retry = pending[queued[index].orderKey], earliest.map({ retry < $0 }) ?? true {
                earliest = retry
            }
        }
        return earliest
    }
}
