#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import NotifyProtocol

/// What `send --no-queue` and `notifyctl outbox` (list, purge, retry, cancel) ask of the
/// outbox, and the counts `status` shows.
extension Outbox {
    /// One attempt per platform, nothing kept: for `send --no-queue`.
    public func sendOnce(to: String, message: String, platforms: [Platform], options: SendOptions = SendOptions()) async throws(CoreError) -> [DeliveryStatus] {
        guard let account = accounts.currentKey else { throw accounts.noAccountReason }
        let plan = try plan(to: to, message: message, platforms: platforms, options: options, account: account)
        var statuses: [DeliveryStatus] = []
        for (platform, request) in plan.copies {
            let now = clock.now()
            var delivery = Delivery(sequence: 0, to: plan.to, platform: platform, message: message, createdAt: now, expiresAt: now, account: account,
                                    request: request)
            delivery.id = "direct-" + delivery.pns
            delivery.idempotencyKey = Delivery.newIdempotencyKey()
            let result = await attempt(delivery)
            delivery.attempts = 1
            switch result {
            case .delivered: delivery.state = .delivered
            case .transient(_, let error), .unreachable(let error), .offline(let error), .unauthorized(let error), .failed(let error):
                delivery.state = .failed
                delivery.lastError = error
            case .accountGone:
                delivery.state = .failed
                delivery.lastError = CoreError.accountGone(user: account.user).wireError
            case .notAttempted:
                // Only lanes leave a request unsent, and one attempt takes none.
                delivery.state = .failed
                delivery.lastError = CoreError.backendUnavailable("not sent: an earlier message to the same recipient failed").wireError
            }
            onEvent(delivery.status)
            statuses.append(delivery.status)
        }
        return statuses
    }

    public func list() -> [DeliveryStatus] {
        (queue.queued + queue.deferred.positions.map(listed) + queue.dead.indices.map(listedDead)).map(status)
    }

    /// A failed or expired delivery as listed: kept without its text (`DeadDeliveries`),
    /// which is read back from its record for its first words (its own file, written when
    /// it failed or expired; or where it was queued, for one that expired while deferred).
    /// One that expired while deferred was kept without its attempts and last error as
    /// well: a tried one's record has them.
    private func listedDead(_ position: Int) -> Delivery {
        let dead = queue.dead[position]
        guard dead.message.isEmpty, case .success(let whole) = store.read(dead.id, at: queue.dead.stored(at: position)) else { return dead }
        var shown = dead
        shown.message = whole.message
        if whole.attempts > dead.attempts {
            shown.attempts = whole.attempts
            shown.lastError = whole.lastError ?? dead.lastError
        }
        return shown
    }

    /// A deferred delivery as listed: read back for its message's first words.
    private func listed(_ position: Int) -> Delivery {
        let delivery = queue.deferred.delivery(at: position)
        guard case .success(var whole) = store.read(delivery.id, at: queue.deferred.stored(at: position)) else { return delivery }
        whole.senderWaiting = delivery.senderWaiting
        if whole.account == nil { whole.account = delivery.account }
        return whole
    }

    /// `outbox` with a `limit`: the entries after the id `after`, in id order (an id
    /// delivered meanwhile still marks the place), at most `limit` of them, with the
    /// counts per recipient that stand in for the rest. Only the page's deferred entries
    /// are read from disk.
    public func page(limit: Int, after: String?) -> OutboxResult {
        let wanted = max(0, limit) + 1
        let afterSequence = after.flatMap(Delivery.sequence(inID:)) ?? Int.min
        // Ids begin with their sequence number, zero-padded: sorted by id is sorted by
        // sequence, and both parts of the queue are. Those that follow `after` come first.
        func follows(_ id: String) -> Bool { after.map { id > $0 } ?? true }
        enum Source { case active(Int), deferred(Int), dead(Int) }
        var candidates: [(id: String, source: Source)] = []
        var taken = 0
        for index in queue.queued.indices where queue.queued[index].sequence >= afterSequence && follows(queue.queued[index].id) {
            candidates.append((queue.queued[index].id, .active(index)))
            taken += 1
            if taken == wanted { break }
        }
        taken = 0
        for position in queue.deferred.positions(from: afterSequence) {
            let id = queue.deferred.delivery(at: position).id
            guard follows(id) else { continue }
            candidates.append((id, .deferred(position)))
            taken += 1
            if taken == wanted { break }
        }
        taken = 0
        let from = queue.dead.firstPosition(atOrAfter: afterSequence)
        var reached = from
        for position in from..<queue.dead.endIndex {
            reached = position + 1
            let id = queue.dead.id(at: position)
            guard follows(id) else { continue }
            candidates.append((id, .dead(position)))
            taken += 1
            if taken == wanted { break }
        }
        // One kept whole may have an id out of its sequence's order (edited by hand): each
        // the loop did not reach is a candidate too.
        for position in queue.dead.positionsKeptWhole where position < from || position >= reached {
            let id = queue.dead.id(at: position)
            if follows(id) { candidates.append((id, .dead(position))) }
        }
        candidates.sort { $0.id < $1.id }
        let chosen = candidates.prefix(wanted)
        let page = chosen.prefix(max(0, limit)).map { candidate -> Delivery in
            switch candidate.source {
            case .active(let index): queue.queued[index]
            case .deferred(let position): listed(position)
            case .dead(let index): listedDead(index)
            }
        }
        let more = chosen.count > page.count
        return OutboxResult(deliveries: page.map(status), total: queue.queuedCount + queue.dead.count,
                            nextAfter: more ? page.last?.id : nil, recipients: recipients())
    }

    /// Per recipient, from each part of the queue as it keeps them: the active part's
    /// deliveries, the deferred part's keys, the failed part's tallies.
    private func recipients() -> [OutboxRecipient] {
        var byRecipient: [String: OutboxRecipient] = [:]
        func tally(_ to: String, oldest: Date, _ count: (inout OutboxRecipient) -> Void) {
            var entry = byRecipient[to] ?? OutboxRecipient(to: to, waiting: 0, held: 0, failed: 0, oldest: oldest)
            count(&entry)
            entry.oldest = min(entry.oldest, oldest)
            byRecipient[to] = entry
        }
        for delivery in queue.queued {
            tally(delivery.to, oldest: delivery.createdAt) { entry in
                if queue.paused || queue.isHeld(delivery) {
                    entry.held += 1
                } else {
                    entry.waiting += 1
                    if let next = delivery.nextAttemptAt { entry.nextAttemptAt = min(entry.nextAttemptAt ?? next, next) }
                }
            }
        }
        let oldest = queue.deferred.isEmpty ? [:] : queue.deferred.oldestPerRecipient
        for key in queue.deferred.perKey {
            tally(key.to, oldest: oldest[key.to] ?? Date()) { entry in
                if queue.paused || key.account == nil || key.account != queue.account {
                    entry.held += key.count
                } else {
                    entry.waiting += key.count
                }
            }
        }
        for (to, dead) in queue.dead.perRecipient {
            tally(to, oldest: dead.oldest) { $0.failed += dead.count }
        }
        return byRecipient.values.sorted { $0.to < $1.to }
    }

    /// Forgets failed and expired entries, and those held for an account that is gone.
    public func purge() async -> Int {
        let purged = queue.purgeDead()
        await afterCommit(purged)
        let store = self.store
        await writer.value {
            for id in purged { try? store.remove(id) }
        }
        return purged.count
    }

    /// What `status` shows: waiting, held (for refused credentials, or for an account not
    /// logged in now), failed or expired; the next attempt; the bounds. Read without a hop
    /// onto the outbox.
    public nonisolated var summary: OutboxSummary {
        let counts = countsShown.current
        return OutboxSummary(waiting: counts.waiting, held: counts.held, failed: counts.failed, nextAttemptAt: counts.nextAttemptAt,
                             limit: settings[\.outboxMax], bytes: counts.bytes, bytesLimit: settings[\.outboxMaxBytes])
    }

    /// Whether the counts `status` reads are those found by looking at every delivery
    /// (checked by the tests' daemons).
    public func countsShownAreCurrent() -> Bool {
        countsShown.current == queue.countsByLooking
    }

    /// Where a page (`outbox --after`) starts, as an id to compare the others with: an id
    /// as listed, or its number as people read it off the list (`1002-apns`, or `1002`: after
    /// every message of that number). The id need not be there still (delivered meanwhile).
    public static func pageCursor(_ given: String) throws(CoreError) -> String {
        let parts = given.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, !first.isEmpty, first.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(first),
              parts.count == 1 || !parts[1].isEmpty else {
            throw .invalidArgument("'\(given)' is not an outbox id: give one that `notifyctl outbox` lists (0000001002-apns), or its number (1002, 1002-apns)")
        }
        if parts.count == 2 { return Delivery.paddedSequence(number) + "-" + parts[1].lowercased() }
        // After every id of that number: the first one the next number could have (past
        // the largest number, after every id of it: no character sorts after U+10FFFF).
        let (next, overflow) = number.addingReportingOverflow(1)
        return overflow ? Delivery.paddedSequence(number) + "-\u{10FFFF}" : Delivery.paddedSequence(next) + "-"
    }

    /// The delivery `given` names: its id, or the id's number as people read it off the
    /// list (`1002` or `1002-apns` for 0000001002-apns; each delivery has a number of its own).
    func resolve(_ given: String) throws(CoreError) -> String {
        if queue.delivery(given) != nil { return given }
        let parts = given.split(separator: "-", maxSplits: 1)
        let platform = parts.count == 2 ? String(parts[1]).lowercased() : nil
        guard let first = parts.first, first.allSatisfy(\.isASCII), let number = Int(first), number >= 0 else {
            throw .invalidArgument("no message '\(given)' in the outbox; `notifyctl outbox` lists them")
        }
        // The deferred and failed parts are searched by number, not gone through whole.
        let numbered = queue.queued.filter { $0.sequence == number } + queue.deferred.positions(of: number).map(queue.deferred.delivery)
            + queue.dead.positions(of: number).map { queue.dead[$0] }
        let named = numbered.filter { platform == nil || $0.pns == platform }
        switch named.count {
        case 0: throw .invalidArgument("no message '\(given)' in the outbox; `notifyctl outbox` lists them")
        case 1: return named[0].id
        default:
            throw .invalidArgument("'\(given)' names \(named.count) messages: \(named.map(\.id).joined(separator: ", ")); give one of them")
        }
    }

    /// `outbox retry [ID]`: tries now instead of at the next scheduled attempt.
    public func retry(_ given: String?) throws(CoreError) -> Int {
        let id = try given.map { (text: String) throws(CoreError) -> String in try resolve(text) }
        if let id, queue.delivery(id)?.state != .queued {
            throw .invalidArgument("message '\(id)' is not waiting (it \(queue.delivery(id)?.state == .expired ? "expired" : "failed")); send it again")
        }
        let count = queue.retryNow(id)
        logger.notice("outbox: retrying \(count) waiting message\(count == 1 ? "" : "s") now, on request")
        pump()
        return count
    }

    /// `outbox cancel ID`: forgets one message, waiting or failed.
    public func cancel(_ given: String) async throws(CoreError) -> DeliveryStatus {
        let id = try resolve(given)
        guard var delivery = queue.cancel(id) else {
            throw .invalidArgument("message '\(id)' is being sent right now; look again with `notifyctl outbox`")
        }
        let store = self.store
        // Cancelled while its batch is being written: removed once the batch is on disk.
        await afterCommit([id])
        await writer.value { try? store.remove(id) }
        delivery.state = .cancelled
        delivery.nextAttemptAt = nil
        logger.notice("outbox: cancelled \(id) to \(delivery.to) on request")
        report(delivery)
        pump()
        return delivery.status
    }
}
